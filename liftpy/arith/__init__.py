"""Index arithmetic: integer expressions over loop variables (``expr``), their simplification with the
variables' ranges (``simplify``) and their C form (``printer``); ``order`` keeps sympy's canonical orders,
``bridge`` converts at the boundary with sympy."""
