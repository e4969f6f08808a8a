/* --cuda-graphs: the training step (forward, backward and, when due, the optimizer) captured from
 * the compute stream into a CUDA graph, then replayed with one cudaGraphLaunch a step, as
 * PyTorch's whole-network capture does; the first step of each shape runs eagerly (the guides'
 * warm-up: lazy initialisation in the libraries happens outside the capture), the second is
 * captured. The loader's host-to-device copy stays outside the graph: set_input copies each batch
 * into one of the two static input buffers, and a graph is captured per buffer, since its kernels
 * read fixed addresses. A graph also fixes the batch size (the epoch's last, partial batch gets
 * its own capture), whether it ends with the optimizer (--accumulate) and whether backward adds
 * to live gradients (--zero-grad none). Nothing in a step may sync with the host or allocate:
 * the fp16 loss scaler's check and skip run on the device, cuBLAS has its workspace set at open,
 * and --cudnn-benchmark's search is done before a capture, never inside it. */
#include "cuda_int.h"

#include "gp/prof.h"
#include "gp/trace_schema.h"

#include <stdio.h>

static gp_status step_body(struct backend *b, int optimizer, gp_error *err)
{
    GP_TRY(cuda_forward(b, 1, err));
    GP_TRY(cuda_backward(b, err));
    return optimizer ? cuda_step(b, err) : GP_OK;
}

/* Capture the step into e->exec. */
static gp_status capture(struct backend *b, struct step_graph *e, int optimizer, gp_error *err)
{
    if (b->spec.kind == MODEL_CNN) /* the algorithms (a --cudnn-benchmark search) first */
        GP_TRY(cuda_conv_prepare(b, 1, err));
    cudaGraph_t graph = NULL;
    CU_TRY(cudaStreamBeginCapture(b->compute, cudaStreamCaptureModeGlobal), err);
    gp_status rc = step_body(b, optimizer, err);
    cudaError_t ended = cudaStreamEndCapture(b->compute, &graph);
    if (rc != GP_OK && err) { /* name the capture: the call is legal outside one */
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        rc = gp_error_set(err, rc, NULL, "--cuda-graphs: capturing the training step: %s", msg);
    }
    if (rc == GP_OK && ended != cudaSuccess)
        rc = gp_error_set(err, GP_ECUDA, NULL,
                          "--cuda-graphs: capturing the training step failed (%s): a call in "
                          "the step cannot be captured (a host sync or an allocation)",
                          cudaGetErrorString(ended));
    if (rc == GP_OK && cudaGraphInstantiate(&e->exec, graph, 0) != cudaSuccess)
        rc = gp_error_set(err, GP_ECUDA, NULL, "--cuda-graphs: cudaGraphInstantiate failed");
    if (graph)
        cudaGraphDestroy(graph);
    cudaGetLastError(); /* a launch error inside a failed capture is reported above */
    return rc;
}

/* The entry for the current step, or NULL with *free_entry the one to take for it. */
static struct step_graph *lookup(struct backend *b, int slot, int optimizer,
                                 struct step_graph **free_entry)
{
    struct step_graph *lru = &b->graphs[0];
    for (int i = 0; i < CUDA_GRAPH_CACHE; i++) {
        struct step_graph *e = &b->graphs[i];
        if (e->used && e->slot == slot && e->n == b->n && e->optimizer == optimizer &&
            e->grads_live == b->grads_live)
            return e;
        if (!e->used || (lru->used && e->last_use < lru->last_use))
            lru = e;
    }
    *free_entry = lru;
    return NULL;
}

gp_status cuda_graph_step(struct backend *b, int optimizer, gp_error *err)
{
    int slot = (int)((b->n_inputs - 1) % 2); /* the buffer set_input filled */
    struct step_graph *fresh = NULL, *e = lookup(b, slot, optimizer, &fresh);
    if (!e) { /* a new shape: one eager step first, as the guides warm up before capturing */
        if (fresh->exec)
            cudaGraphExecDestroy(fresh->exec);
        *fresh = (struct step_graph){.used = 1,
                                     .slot = slot,
                                     .n = b->n,
                                     .optimizer = optimizer,
                                     .grads_live = b->grads_live,
                                     .last_use = ++b->graph_uses};
        return step_body(b, optimizer, err);
    }
    if (!e->exec) {
        GP_PROF_PUSH(GP_NAME_GRAPH_CAPTURE);
        gp_status rc = capture(b, e, optimizer, err);
        GP_PROF_POP();
        if (rc != GP_OK) {
            e->exec = NULL;
            return rc;
        }
        e->grads_after = b->grads_live; /* what the step's host code left */
        b->captures++;
    }
    e->last_use = ++b->graph_uses;
    b->grads_live = e->grads_after;
    CU_TRY(cudaGraphLaunch(e->exec, b->compute), err);
    return GP_OK;
}

void cuda_graphs_release(struct backend *b)
{
    for (int i = 0; i < CUDA_GRAPH_CACHE; i++)
        if (b->graphs[i].exec) {
            cudaGraphExecDestroy(b->graphs[i].exec);
            b->graphs[i].exec = NULL;
        }
}
