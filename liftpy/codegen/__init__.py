"""From a lowered liftpy program to an OpenCL kernel: memory plan, views, loops, barriers, source."""
