"""Host side: OpenCL devices, building kernels with pyopencl, running them with profiling."""
