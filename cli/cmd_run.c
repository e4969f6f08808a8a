/* gprof-train run: with "-- CMD ARGS..." profile any program (run_exec.c); otherwise train the
 * bundled model under the profiler (run_train.c). */
#include "cmds.h"

#include <string.h>

int cmd_run(int argc, const char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            return cmd_run_exec(argc, argv);
    return cmd_run_train(argc, argv);
}
