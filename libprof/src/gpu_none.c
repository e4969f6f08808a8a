/* gpu_none.c: the GPU hooks of a build without CUPTI: nothing is recorded, and the trace says
 * why in "gprof"."gpu_status". */
#include "prof_int.h"

int prof_gpu_start(unsigned record, char *why, size_t why_len)
{
    (void)record;
    snprintf(why, why_len, "no GPU activity could be recorded: built without CUPTI");
    return -1;
}

void prof_gpu_flush(void)
{
}

void prof_gpu_sync(void)
{
}

void prof_gpu_stop(int process_exiting)
{
    (void)process_exiting;
}

void prof_gpu_drain(prof_out *o, int final, int from_signal)
{
    (void)o;
    (void) final;
    (void)from_signal;
}

void prof_gpu_started_status(void)
{
}

int prof_gpu_device_props(prof_out *o)
{
    (void)o;
    return 0;
}

void prof_gpu_metadata(prof_out *o)
{
    (void)o;
}

void prof_gpu_after_fork(void)
{
}

uint64_t prof_gpu_dropped(void)
{
    return 0;
}

void prof_gpu_health_get(prof_gpu_health *h)
{
    memset(h, 0, sizeof(*h));
}

void prof_gpu_config(prof_out *o)
{
    (void)o;
}

void prof_gpu_ensure_started(void)
{
}

void prof_gpu_ext_push(uint64_t id)
{
    (void)id;
}

void prof_gpu_ext_pop(void)
{
}
