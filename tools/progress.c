/* The progress bar (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "cli.h"

enum { BAR = 24 };

void tdm_progress_begin(tdm_progress *p, const char *what, const char *unit, size_t total,
                        int force_off)
{
    *p = (tdm_progress){!force_off && isatty(2), what, unit, total, tdm_cli_now(), 0};
}

/* "1:02:03", "2:03" or "--:--" when unknown. */
static void clock_text(char *buf, size_t cap, double s)
{
    if (!(s >= 0) || s > 359999) {
        snprintf(buf, cap, "--:--");
        return;
    }
    unsigned long t = (unsigned long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%lu:%02lu", t / 60, t % 60);
}

static void draw(tdm_progress *p, size_t done, double now)
{
    double el = now - p->start, rate = el > 0 ? (double)done / el : 0;
    size_t fill = p->total ? done * BAR / p->total : BAR;
    char bar[BAR + 1], eta[32];
    for (size_t i = 0; i < BAR; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[BAR] = 0;
    int left = done < p->total;
    clock_text(eta, sizeof eta, !left ? el : rate > 0 ? (double)(p->total - done) / rate : -1);
    /* \033[K clears what a longer previous line left */
    fprintf(stderr, "\r%s [%s] %zu/%zu %s, %.0f/s, %s %s\033[K", p->what, bar, done, p->total,
            p->unit, rate, left ? "ETA" : "in", eta);
    fflush(stderr);
    p->last = now;
}

void tdm_progress_update(tdm_progress *p, size_t done)
{
    if (!p->on)
        return;
    double now = tdm_cli_now();
    if (now - p->last >= 0.1 || done >= p->total)
        draw(p, done, now);
}

void tdm_progress_clear(tdm_progress *p)
{
    if (p->on)
        fputs("\r\033[K", stderr);
    p->last = 0;
}

void tdm_progress_end(tdm_progress *p, size_t done)
{
    if (!p->on)
        return;
    draw(p, done, tdm_cli_now());
    fputc('\n', stderr);
}
