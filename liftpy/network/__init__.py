"""Whole networks from the operator library: graphs with shapes (``graph``), VGG-16, ResNet-18 and
MobileNetV2 (``models``), one arena for the intermediate tensors (``memory``), and running a network with
the best stored implementation of every layer (``run``; ``liftpy network``)."""
