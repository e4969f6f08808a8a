/* tfevents_write DIR N: write N steps of train/loss = 1/(step+1), train/accuracy = step/N and
 * train/samples_per_sec = 1000 + step with the trainer's tfevents writer, for the Python test
 * that reads them back with TensorBoard's own event reader. Prints the event file's path. */
#include "tfevents.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tfevents_write DIR N\n");
        return 2;
    }
    gp_error err;
    tfevents_writer *w = tfevents_open(argv[1], &err);
    if (!w) {
        fprintf(stderr, "tfevents_write: %s: %s\n", err.path, err.msg);
        return 1;
    }
    int n = atoi(argv[2]);
    for (int step = 0; step < n; step++) {
        if (tfevents_add_scalar(w, "train/loss", step, 1.0f / (float)(step + 1)) != GP_OK ||
            tfevents_add_scalar(w, "train/accuracy", step, (float)step / (float)n) != GP_OK ||
            tfevents_add_scalar(w, "train/samples_per_sec", step, 1000.0f + (float)step) != GP_OK)
            break;
    }
    printf("%s\n", tfevents_path(w));
    if (tfevents_close(w, &err) != GP_OK) {
        fprintf(stderr, "tfevents_write: %s: %s\n", err.path, err.msg);
        return 1;
    }
    return 0;
}
