# Sourced by the device scripts, from the repository root, after .whl/env.sh: Python keeps its bytecode under
# /tmp/pyc, and ``keep_bytecode [MORE_TREES...]`` compiles the libraries, liftpy, the installed wheels and the
# trees given there once (the device image ships sympy without bytecode and sets PYTHONDONTWRITEBYTECODE:
# every worker process compiled them again as it started, seconds each).  pandas too: scikit-learn imports it where
# it is installed, and the device image has it (importing sklearn.ensemble: 4.8-5.5 s, 3.0-4.0 s with pandas compiled).
export PYTHONPYCACHEPREFIX=/tmp/pyc
keep_bytecode() {
  local sp
  sp=$(python -c 'import sympy,os;print(os.path.dirname(os.path.dirname(sympy.__file__)))')
  python -m compileall -q -j 0 $sp/sympy $sp/mpmath $sp/numpy $sp/scipy $sp/sklearn $sp/networkx $sp/pandas liftpy "$@" \
    $(echo $PYTHONPATH | cut -d: -f1) > /dev/null 2>&1
}
