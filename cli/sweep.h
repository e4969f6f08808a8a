/* cli/sweep.h: the parts of `gprof-train sweep` (issue 14 item 2): the grid of --vary settings
 * and the command each setting runs (sweep_spec.c), running and timing one command with its
 * output in a log, signals forwarded (sweep_child.c), reading back what a run wrote
 * (sweep_run.c), and the table and sweep.json (sweep_out.c). */
#ifndef GP_CLI_SWEEP_H
#define GP_CLI_SWEEP_H

#include <stddef.h>

#define SWEEP_MAX_KEYS     8
#define SWEEP_MAX_VALUES   64
#define SWEEP_MAX_SETTINGS 1024

/* One --vary KEY=V1,V2,...: the values are copies (on/off for the trainer's switches). */
struct sweep_key {
    char *name;
    char *values[SWEEP_MAX_VALUES];
    int n_values;
    int is_switch; /* a trainer flag without a value: on = --KEY, off = --no-KEY */
};

/* The grid: every combination of the keys' values, the first key varying slowest. */
struct sweep_spec {
    struct sweep_key keys[SWEEP_MAX_KEYS];
    int n_keys;
    int trainer; /* the bundled trainer (keys are `run` flags), else a -- CMD template */
};

/* Add one --vary spec. @return CLI_OK, or CLI_ERROR with the problem printed (no '=', an empty
 * key or value, a key given twice, an unknown trainer flag, a switch set to other than on/off,
 * too many values or settings). */
int sweep_spec_add(struct sweep_spec *s, const char *arg);
void sweep_spec_release(struct sweep_spec *s);

/* @return the number of settings (the product of the value counts; 1 with no key). */
size_t sweep_n_settings(const struct sweep_spec *s);

/* The value index of each key in setting `i` (0 .. n_settings-1). */
void sweep_setting(const struct sweep_spec *s, size_t i, int *idx);

/* "workers=2 pin-memory=on" into buf. */
void sweep_label(const struct sweep_spec *s, const int *idx, char *buf, size_t cap);

/* Check a -- CMD template: every {KEY} it holds is a varied key and every varied key appears.
 * @return CLI_OK or CLI_ERROR (message printed). */
int sweep_template_check(const struct sweep_spec *s, const char *const *tmpl, int n);

/* Check that the template's program can run (a path that is executable, or a name found in
 * PATH); one with a {KEY} in it is left to each setting. @return CLI_OK or CLI_ERROR (message
 * printed). */
int sweep_program_check(const char *prog);

/* The command of setting `idx`: each template element with every {KEY} replaced by its value,
 * as one argv element each (no shell: spaces and quotes in values stay in their element).
 * @return a NULL-terminated argv (free with sweep_argv_free), or NULL when out of memory. */
char **sweep_substitute(const struct sweep_spec *s, const int *idx, const char *const *tmpl, int n);

/* The trainer flags of setting `idx`: "--workers", "2", "--pin-memory", ... appended to `pre`
 * (n_pre elements). @return a NULL-terminated argv, or NULL when out of memory. */
char **sweep_trainer_argv(const struct sweep_spec *s, const int *idx, const char *const *pre,
                          int n_pre);
void sweep_argv_free(char **argv);

#define SWEEP_SPAWN_INTERRUPTED (-2)

/* Run argv in its own process group with stdin from /dev/null and stdout and stderr into `log`
 * (created), and wait. @param wall_s receives the wall time from start to exit. @return the exit
 * status as a shell reports it (128 + signal when killed), -1 when it could not start (message
 * printed), or SWEEP_SPAWN_INTERRUPTED when the sweep was interrupted before it ended (a
 * trainer stopped by SIGINT exits 0 early: its time means nothing). */
int sweep_spawn(char *const *argv, const char *log, double *wall_s);

/* From sweep_signals_on to sweep_signals_off, SIGINT, SIGTERM and SIGHUP (unless ignored, as
 * under nohup) are forwarded to the running command's process group and mark the sweep
 * interrupted: sweep_spawn starts nothing more. */
void sweep_signals_on(void);
void sweep_signals_off(void);

/* @return the first signal that interrupted the sweep, or 0. */
int sweep_interrupted(void);

/* The number after "KEY": in a run's summary.json (the trainer writes its top-level fields
 * first, before per_epoch). @return 1 and *out, or 0 when absent or unreadable. */
int sweep_summary_number(const char *summary_path, const char *key, double *out);

/* The single folder `gprof-train run -o DIR` made inside DIR, into buf. @return CLI_OK or
 * CLI_ERROR (message printed). */
int sweep_run_dir(const char *dir, char *buf, size_t cap);

#endif
