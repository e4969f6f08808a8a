/* Writes a small trace with libprof itself (the real writer, not a hand-made file): two threads'
 * nested ranges, steps, marks and counters (gp_prof_counter), some counters written out of time
 * order across threads, one with an inf value, for the Perfetto export tests.
 * usage: prof_counters_write OUT.json */
#include "gp/prof.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg)
{
    (void)arg;
    gp_prof_thread_name("loader");
    gp_prof_name load = gp_prof_intern("load batch"), queue = gp_prof_intern("queue depth");
    for (int i = 0; i < 20; i++) {
        gp_prof_push(load);
        gp_prof_counter(queue, (double)(i % 5) + 0.25);
        gp_prof_pop();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prof_counters_write OUT.json\n");
        return 2;
    }
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = argv[1];
    o.wait_when_full = 1;
    o.handle_signals = 0;
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK) {
        fprintf(stderr, "prof_counters_write: %s\n", err.msg);
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    gp_prof_name fwd = gp_prof_intern("forward"), loss = gp_prof_intern("loss"),
                 lr = gp_prof_intern("learning rate"), mark = gp_prof_intern("checkpoint");
    for (int s = 0; s < 5; s++) {
        gp_prof_step_begin();
        gp_prof_push(fwd);
        gp_prof_counter(loss, 2.0 / (s + 1));
        gp_prof_pop();
        gp_prof_counter(lr, s == 3 ? INFINITY : 1e-3 * (s + 1));
        gp_prof_mark(mark);
        gp_prof_step_end();
    }
    pthread_join(th, NULL);
    if (gp_prof_shutdown(&err) != GP_OK) {
        fprintf(stderr, "prof_counters_write: %s\n", err.msg);
        return 1;
    }
    return 0;
}
