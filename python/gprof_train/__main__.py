"""python -m gprof_train ARGS: the gprof-train command."""
from gprof_train._tool import main

main()
