/* signals.h: SIGINT, SIGTERM and SIGUSR1 ask a training run to stop after
 * the current step, saving its state (mpirun forwards SIGUSR1 to every
 * rank); so does SIGPIPE, when the program reading the run's output has
 * gone (`./train DATA | head`), instead of killing it with the epoch lost.
 * The flag they set is the program's one piece of global state. */
#ifndef RUN_SIGNALS_H
#define RUN_SIGNALS_H

/* Installs the handlers (training commands only; the others just stop). */
void signals_install(void);
/* The signal that asked to stop, or 0. */
int signals_pending(void);
/* "SIGINT", "SIGTERM", "SIGUSR1" or "SIGPIPE (...)". */
const char *signals_name(int sig);

#endif
