"""The liftpy IR: types, expressions, primitives, type checking, the interpreter and the text form."""
