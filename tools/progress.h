/* A progress bar on stderr for long commands (`tandem run`, `tandem bench
 * queries`): items done of the total, the rate and the time left. Drawn only
 * when stderr is a terminal, at most ten times a second; nothing at all goes
 * to a pipe or a file. One thread draws (the one that calls these). */
#ifndef TDM_CLI_PROGRESS_H
#define TDM_CLI_PROGRESS_H

#include <stddef.h>

typedef struct tdm_progress {
    int on;               /* stderr is a terminal */
    const char *what;     /* the label before the bar, owned by the caller */
    const char *unit;     /* "queries", ... */
    size_t total;
    double start, last;   /* tdm_cli_now() at begin, at the last draw */
} tdm_progress;

/* Starts a bar of `total` items labelled `what`; `force_off` keeps it off
 * even on a terminal. */
void tdm_progress_begin(tdm_progress *p, const char *what, const char *unit, size_t total,
                        int force_off);
/* `done` items are finished; redraws when a tenth of a second has passed
 * since the last draw, or when done reaches the total. */
void tdm_progress_update(tdm_progress *p, size_t done);
/* Clears the bar's line, before a message (the next update redraws it). */
void tdm_progress_clear(tdm_progress *p);
/* Leaves the last drawn state on its own line (nothing when off). */
void tdm_progress_end(tdm_progress *p, size_t done);

#endif
