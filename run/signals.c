/* signals.c: the stop request (see signals.h). */
#include "run/signals.h"

#include <signal.h>
#include <string.h>

/* Set by the handler, read by the training loop: a handler can reach nothing else. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) { stop_requested = sig; }

void signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);   /* the reader of stdout went away (./train ... | head) */
}

int signals_pending(void) { return (int)stop_requested; }

const char *signals_name(int sig) {
    return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1"
         : sig == SIGPIPE ? "SIGPIPE (standard output was closed)" : "SIGINT";
}
