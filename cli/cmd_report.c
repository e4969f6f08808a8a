/* gprof-train report: key-averages tables, as PyTorch's prof.key_averages().table(). */
#include "cli.h"
#include "cmds.h"
#include "opt.h"

static const char *const usage[] = {
    "gprof-train report [options] TRACE|DIR...",
    NULL,
};

int cmd_report(int argc, const char **argv)
{
    const char *sort = "cuda_time_total", *group_by = "name", *format = "table";
    long row_limit = 20, jobs = 0;
    const struct opt opts[] = {
        OPT_GROUP("options:"),
        OPT_STR('s', "sort", &sort, "KEY",
                "sort rows by KEY: cpu_time, cuda_time, cpu_time_total, cuda_time_total,\n"
                "                              self_cpu_time_total, self_cuda_time_total, count\n"
                "                              (device_* spellings too; default cuda_time_total)"),
        OPT_INT('n', "row-limit", &row_limit, "N", "print at most N rows (default 20, 0 = all)", 0,
                1000000000),
        OPT_STR(0, "group-by", &group_by, "KEY", "name (default) or name+shape"),
        OPT_STR('f', "format", &format, "FMT", "table (default), csv or json"),
        OPT_INT('j', "jobs", &jobs, "N", "analyse N traces at once (default: one per core)", 0, 1024),
        OPT_END(),
    };
    const struct opt_help help = {
        "report", usage,
        "Read traces written by gprof-train or by PyTorch's profiler (.json or .json.gz) and print\n"
        "a summary (steps, step-time breakdown, GPU busy, memory) and the key-averages table with\n"
        "PyTorch's columns and semantics. A directory means every trace in it, one section each.",
        "examples:\n"
        "    gprof-train report runs/mlp-20261121-120000/\n"
        "    gprof-train report trace.pt.trace.json.gz --sort self_cpu_time_total -n 10\n"
        "    gprof-train report trace.json --format csv > ops.csv\n"};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    (void)sort, (void)group_by, (void)format;
    return cli_not_built("report", "the trace reader is not part of this build yet");
}
