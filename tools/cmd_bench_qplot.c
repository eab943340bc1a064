/* `tandem bench queries`: the latency distribution as plain SVG, one panel
 * per k: the fraction of queries answered within x microseconds (log x), a
 * line per algorithm (colour) and device (dash), the oracle in black. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd_bench_queries.h"
#include "common/fsutil.h"
#include "tandem.h"

enum { PW = 440, PH = 380, ML = 70, MT = 50, MB = 60, GAP = 30, LEG = 250, MAXK = 8,
       POINTS = 400 };

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
static const char *const dashes[] = {"", "7 4", "2 3", "10 3 2 3"};

/* The oracle in black (OR) and grey (AND). */
static const char *color(const tdm_bq_series *r)
{
    return r->color == -1 ? "#000" : r->color < 0 ? "#888" : colors[r->color % 10];
}

typedef struct frame {
    double x0, x1;        /* log10 microseconds */
    int left;             /* the panel's left edge */
} frame;

static double px(const frame *f, double us)
{
    double t = (log10(us > 0 ? us : 1e-3) - f->x0) / (f->x1 - f->x0);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return f->left + t * PW;
}

static double py(double frac)
{
    return MT + (1 - frac) * PH;
}

static void xml_text(FILE *f, const char *s)
{
    for (const char *p = s; *p; p++)
        fputs(*p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;" : (char[2]){*p, 0},
              f);
}

/* The distinct k of the set, ascending (at most MAXK). */
static size_t find_ks(const tdm_bq_set *s, uint32_t *ks)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = 0;
        while (j < n && ks[j] != s->v[i].k)
            j++;
        if (j == n && n < MAXK)
            ks[n++] = s->v[i].k;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort */
        for (size_t j = i; j > 0 && ks[j - 1] > ks[j]; j--) {
            uint32_t t = ks[j];
            ks[j] = ks[j - 1];
            ks[j - 1] = t;
        }
    return n;
}

static void find_range(const tdm_bq_set *s, frame *fr)
{
    double lo = 1e300, hi = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].n) {
            double a = s->v[i].us[0] > 0 ? s->v[i].us[0] : 1e-3;
            lo = a < lo ? a : lo;
            hi = s->v[i].us[s->v[i].n - 1] > hi ? s->v[i].us[s->v[i].n - 1] : hi;
        }
    if (hi <= 0)
        lo = 1, hi = 10;
    fr->x0 = floor(log10(lo));
    fr->x1 = ceil(log10(hi));
    if (fr->x1 <= fr->x0)
        fr->x1 = fr->x0 + 1;
}

static void draw_panel(FILE *f, const tdm_bq_set *s, const frame *fr, uint32_t k)
{
    fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>\n",
            fr->left, MT, PW, PH);
    for (double x = fr->x0; x <= fr->x1 + 1e-9; x += 1) {
        double X = px(fr, pow(10, x));
        fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ddd'/>\n", X, MT, X,
                MT + PH);
        fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle'>%g</text>\n", X, MT + PH + 18,
                pow(10, x));
    }
    static const double ys[] = {0, 0.25, 0.5, 0.75, 0.9, 0.99, 1};
    for (size_t i = 0; i < sizeof ys / sizeof *ys; i++) {
        fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s'/>\n", fr->left,
                py(ys[i]), fr->left + PW, py(ys[i]), ys[i] >= 0.9 ? "#bbb" : "#e5e5e5");
        if (ys[i] != 0.99) /* 0.99 sits too close to 1 for a label */
            fprintf(f, "<text x='%d' y='%.1f' text-anchor='end'>%g</text>\n", fr->left - 6,
                    py(ys[i]) + 4, ys[i]);
    }
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='14'>top %u</text>\n",
            fr->left + PW / 2, MT - 10, k);
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>latency per query (µs, log)</text>\n",
            fr->left + PW / 2, MT + PH + 40);
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        if (r->k != k || !r->n || !r->cdf)
            continue;
        const char *c = color(r);
        const char *d = r->device < 0 ? "1 2" : dashes[r->device % 4];
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='%s'%s%s%s points='", c,
                r->device < 0 ? "1.5" : "2", *d ? " stroke-dasharray='" : "", d, *d ? "'" : "");
        size_t steps = r->n < POINTS ? r->n : POINTS;
        for (size_t j = 1; j <= steps; j++) {
            size_t q = (size_t)ceil((double)j * (double)r->n / (double)steps);
            fprintf(f, "%.1f,%.1f ", px(fr, r->us[q - 1]), py((double)q / (double)r->n));
        }
        fprintf(f, "'/>\n");
    }
}

/* Colours by algorithm, dashes by device. */
static void draw_legend(FILE *f, const tdm_bq_set *s, int x)
{
    int y = MT + 10;
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(s->v[j].algorithm, r->algorithm) != 0;
        if (!first)
            continue;
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='3'/>"
                   "<text x='%d' y='%d' font-size='11'>%s</text>\n", x, y, x + 24, y,
                color(r), x + 30, y + 4, r->algorithm);
        y += 17;
    }
    y += 10;
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = s->v[j].device != r->device;
        if (!first)
            continue;
        const char *d = r->device < 0 ? "1 2" : dashes[r->device % 4];
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#444' stroke-width='2'%s%s%s/>"
                   "<text x='%d' y='%d' font-size='11'>", x, y, x + 24, y,
                *d ? " stroke-dasharray='" : "", d, *d ? "'" : "", x + 30, y + 4);
        if (r->device >= 0)
            fprintf(f, "%d: ", r->device);
        xml_text(f, r->device_name);
        fprintf(f, "</text>\n");
        y += 17;
    }
}

int tdm_bq_write_svg(const char *path, const tdm_bq_set *s, const char *title)
{
    tdm_outfile out;
    if (tdm_bq_open(&out, path))
        return -1;
    FILE *f = out.f;
    uint32_t ks[MAXK];
    size_t nk = find_ks(s, ks);
    int panels = nk ? (int)nk : 1;
    int w = ML + panels * PW + (panels - 1) * (ML + GAP) + GAP + LEG, h = MT + PH + MB + 10;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
               "font-family='sans-serif' font-size='12'>\n<rect width='100%%' height='100%%' "
               "fill='white'/>\n<text x='%d' y='20' text-anchor='middle' font-size='15'>",
            w, h, (w - LEG) / 2);
    xml_text(f, title);
    fprintf(f, "</text>\n<text transform='translate(18 %d) rotate(-90)' text-anchor='middle'>"
               "fraction of queries answered within</text>\n", MT + PH / 2);
    frame fr;
    find_range(s, &fr);
    for (size_t i = 0; i < nk; i++) {
        fr.left = ML + (int)i * (PW + ML + GAP);
        draw_panel(f, s, &fr, ks[i]);
    }
    draw_legend(f, s, w - LEG + 10);
    fprintf(f, "</svg>\n");
    return tdm_bq_commit(&out);
}
