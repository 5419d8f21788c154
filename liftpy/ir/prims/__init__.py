"""The primitives of liftpy by family; ``liftpy.ir.prims.base`` says what each declares, and
``liftpy.ir.primitives`` gathers them."""
