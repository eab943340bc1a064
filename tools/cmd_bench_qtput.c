/* `tandem bench queries --throughput-plot`: queries per second against the
 * queries in flight, as plain SVG: a panel per k (columns) and device
 * (rows), log-log; a line per algorithm (colour), solid with dots for batch
 * calls (x = queries a call), dashed with rings for single queries (x =
 * threads sending them), the host oracle's throughput a dotted black level. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd_bench_queries.h"
#include "common/fsutil.h"

enum { PW = 420, PH = 280, ML = 80, MT = 60, MB = 56, GAP = 40, LEG = 300, MAXP = 8 };

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

typedef struct axes {
    double x1;            /* log2 of the largest x (x0 is 0) */
    double y0, y1;        /* log10 queries per second */
    int left, top;        /* the panel's corner */
} axes;

static double px(const axes *a, double x)
{
    return a->left + (x > 1 ? log2(x) / a->x1 : 0) * PW;
}

static double py(const axes *a, double qps)
{
    double t = (log10(qps > 0 ? qps : 1e-3) - a->y0) / (a->y1 - a->y0);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return a->top + (1 - t) * PH;
}

static double xval(const tdm_bq_series *r)
{
    return r->batch ? r->batch : r->threads;
}

static void xml_text(FILE *f, const char *s)
{
    for (const char *p = s; *p; p++)
        fputs(*p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;" : (char[2]){*p, 0},
              f);
}

/* Adds v to the ascending distinct list l[*n] (at most MAXP). */
static void add_distinct(int *l, size_t *n, int v)
{
    size_t i = 0;
    while (i < *n && l[i] < v)
        i++;
    if ((i < *n && l[i] == v) || *n == MAXP)
        return;
    memmove(l + i + 1, l + i, (*n - i) * sizeof *l);
    l[i] = v;
    (*n)++;
}

static void find_range(const tdm_bq_set *s, axes *a)
{
    double lo = 1e300, hi = 0, xmax = 2;
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        if (r->qps <= 0)
            continue;
        lo = r->qps < lo ? r->qps : lo;
        hi = r->qps > hi ? r->qps : hi;
        if (r->device >= 0)
            xmax = xval(r) > xmax ? xval(r) : xmax;
    }
    if (hi <= 0)
        lo = 1, hi = 10;
    a->y0 = floor(log10(lo));
    a->y1 = ceil(log10(hi));
    if (a->y1 <= a->y0)
        a->y1 = a->y0 + 1;
    a->x1 = ceil(log2(xmax));
}

static void draw_frame(FILE *f, const axes *a, uint32_t k, const char *device)
{
    fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>\n",
            a->left, a->top, PW, PH);
    for (int e = 0; e <= (int)a->x1; e++) {
        double X = px(a, pow(2, e));
        fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#e5e5e5'/>\n", X, a->top,
                X, a->top + PH);
        fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle'>%.0f</text>\n", X,
                a->top + PH + 16, pow(2, e));
    }
    for (double y = a->y0; y <= a->y1 + 1e-9; y += 1) {
        double Y = py(a, pow(10, y));
        fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>\n", a->left, Y,
                a->left + PW, Y);
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end'>%g</text>\n", a->left - 6, Y + 4,
                pow(10, y));
    }
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='13'>top %u, ",
            a->left + PW / 2, a->top - 8, k);
    xml_text(f, device);
    fprintf(f, "</text>\n<text x='%d' y='%d' text-anchor='middle'>queries in flight (batch "
               "size, or threads of single queries)</text>\n", a->left + PW / 2,
            a->top + PH + 36);
}

/* The series of one algorithm (colour) and mode at k on device d, as a line. */
static void draw_line(FILE *f, const tdm_bq_set *s, const axes *a, uint32_t k, int d,
                      int color, int batch)
{
    const char *c = colors[color % 10];
    int n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        if (r->k != k || r->device != d || r->color != color || !r->batch != !batch ||
            r->qps <= 0)
            continue;
        if (!n++)
            fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", c,
                    batch ? "" : " stroke-dasharray='6 4'");
        fprintf(f, "%.1f,%.1f ", px(a, xval(r)), py(a, r->qps));
    }
    if (!n)
        return;
    fprintf(f, "'/>\n");
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        if (r->k == k && r->device == d && r->color == color && !r->batch == !batch &&
            r->qps > 0)
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s' stroke='%s'/>\n",
                    px(a, xval(r)), py(a, r->qps), batch ? c : "white", c);
    }
}

static void draw_panel(FILE *f, const tdm_bq_set *s, const axes *a, uint32_t k, int d,
                       const int *colors_used, size_t ncol)
{
    const char *dname = "";
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].device == d)
            dname = s->v[i].device_name;
    char title[96];
    snprintf(title, sizeof title, "device %d: %.60s", d, dname);
    draw_frame(f, a, k, title);
    for (size_t i = 0; i < s->n; i++) { /* the oracle at this k: a level */
        const tdm_bq_series *r = &s->v[i];
        if (r->device < 0 && r->k == k && r->qps > 0)
            fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s' "
                       "stroke-dasharray='1 3' stroke-width='1.5'/>\n", a->left, py(a, r->qps),
                    a->left + PW, py(a, r->qps), r->color == -2 ? "#888" : "#000");
    }
    for (size_t c = 0; c < ncol; c++) {
        draw_line(f, s, a, k, d, colors_used[c], 1);
        draw_line(f, s, a, k, d, colors_used[c], 0);
    }
}

static void draw_legend(FILE *f, const tdm_bq_set *s, int x, int y)
{
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        int first = r->device >= 0;
        for (size_t j = 0; j < i && first; j++)
            first = s->v[j].device < 0 || strcmp(s->v[j].algorithm, r->algorithm) != 0;
        if (!first)
            continue;
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='3'/>"
                   "<text x='%d' y='%d' font-size='11'>%s</text>\n", x, y, x + 24, y,
                colors[r->color % 10], x + 30, y + 4, r->algorithm);
        y += 17;
    }
    static const char *const what[] = {
        "batch calls (x: queries a call)", "single queries (x: threads sending)",
        "host oracle (OR black, AND grey)"};
    static const char *const dash[] = {"", " stroke-dasharray='6 4'", " stroke-dasharray='1 3'"};
    y += 10;
    for (int i = 0; i < 3; i++, y += 17)
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#444' stroke-width='2'%s/>"
                   "<text x='%d' y='%d' font-size='11'>%s</text>\n", x, y, x + 24, y, dash[i],
                x + 30, y + 4, what[i]);
}

int tdm_bq_write_tput_svg(const char *path, const tdm_bq_set *s, const char *title)
{
    tdm_outfile out;
    if (tdm_bq_open(&out, path))
        return -1;
    FILE *f = out.f;
    int ks[MAXP], devs[MAXP], cols[MAXP];
    size_t nk = 0, nd = 0, nc = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].device >= 0) {
            add_distinct(ks, &nk, (int)s->v[i].k);
            add_distinct(devs, &nd, s->v[i].device);
            add_distinct(cols, &nc, s->v[i].color);
        }
    int pc = nk ? (int)nk : 1, pr = nd ? (int)nd : 1;
    int w = ML + pc * PW + (pc - 1) * (ML + GAP) + GAP + LEG;
    int h = MT + pr * (PH + MB + MT) + 10;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
               "font-family='sans-serif' font-size='12'>\n<rect width='100%%' height='100%%' "
               "fill='white'/>\n<text x='%d' y='22' text-anchor='middle' font-size='15'>",
            w, h, (w - LEG) / 2);
    xml_text(f, title);
    fprintf(f, "</text>\n");
    axes a;
    find_range(s, &a);
    for (size_t r = 0; r < nd; r++)
        for (size_t c = 0; c < nk; c++) {
            a.left = ML + (int)c * (PW + ML + GAP);
            a.top = MT + 10 + (int)r * (PH + MB + MT);
            fprintf(f, "<text transform='translate(%d %d) rotate(-90)' text-anchor='middle'>"
                       "queries / s (log)</text>\n", a.left - 52, a.top + PH / 2);
            draw_panel(f, s, &a, (uint32_t)ks[c], devs[r], cols, nc);
        }
    draw_legend(f, s, w - LEG + 10, MT + 20);
    fprintf(f, "</svg>\n");
    return tdm_bq_commit(&out);
}
