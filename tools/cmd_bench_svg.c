/* The benchmark's plot: decode speed against list length, log-log, one line
 * per codec and device (after Mallia et al. 2019, Figure 3), as plain SVG. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd_bench.h"
#include "common/fsutil.h"

enum { W = 900, H = 560, ML = 80, MR = 250, MT = 50, MB = 60 };

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

typedef struct axes {
    double x0, x1, y0, y1; /* log2 n, log10 speed */
} axes;

static double px(const axes *a, double n)
{
    double t = a->x1 > a->x0 ? (log2(n) - a->x0) / (a->x1 - a->x0) : 0.5;
    return ML + t * (W - ML - MR);
}

static double py(const axes *a, double s)
{
    double t = (log10(s) - a->y0) / (a->y1 - a->y0);
    return H - MB - t * (H - MT - MB);
}

static int same_series(const tdm_bench_row *a, const tdm_bench_row *b)
{
    return a->device == b->device && !strcmp(a->codec, b->codec);
}

static int has_dist(const tdm_bench_row *r, const char *dist)
{
    return !strcmp(r->dist, dist) && r->kernel_mis > 0;
}

static void find_axes(const tdm_bench_rows *rows, const char *dist, axes *a)
{
    double xmin = 1e30, xmax = 0, ymin = 1e30, ymax = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const tdm_bench_row *r = &rows->v[i];
        if (!has_dist(r, dist))
            continue;
        double x = log2((double)r->n), y = r->kernel_mis;
        xmin = x < xmin ? x : xmin;
        xmax = x > xmax ? x : xmax;
        ymin = y < ymin ? y : ymin;
        ymax = y > ymax ? y : ymax;
    }
    if (xmax == 0) {
        xmin = 16, xmax = 25, ymin = 1, ymax = 10;
    }
    a->x0 = floor(xmin);
    a->x1 = ceil(xmax);
    a->y0 = floor(log10(ymin));
    a->y1 = ceil(log10(ymax));
    if (a->y1 <= a->y0)
        a->y1 = a->y0 + 1;
}

static void draw_grid(FILE *f, const axes *a)
{
    fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>\n", ML,
            MT, W - ML - MR, H - MT - MB);
    for (double x = a->x0; x <= a->x1 + 1e-9; x += 1) {
        double X = px(a, pow(2, x));
        fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ddd'/>\n", X, MT, X,
                H - MB);
        fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle'>2<tspan dy='-6' "
                   "font-size='10'>%d</tspan></text>\n", X, H - MB + 20, (int)x);
    }
    for (double y = a->y0; y <= a->y1 + 1e-9; y += 1) {
        for (int m = 1; m < 10 && y + log10(m) <= a->y1 + 1e-9; m++) {
            double Y = py(a, m * pow(10, y));
            fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s'/>\n", ML, Y,
                    W - MR, Y, m == 1 ? "#ccc" : "#f0f0f0");
        }
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end'>%.0f</text>\n", ML - 6,
                py(a, pow(10, y)) + 4, pow(10, y));
    }
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>list length (integers)</text>\n",
            (ML + W - MR) / 2, H - 15);
    fprintf(f, "<text transform='translate(20 %d) rotate(-90)' text-anchor='middle'>"
               "decode speed (millions of integers / s)</text>\n", (MT + H - MB) / 2);
}

/* One polyline with markers per series, in first-seen order; the CPU
 * reference dashed. */
static void draw_series(FILE *f, const tdm_bench_rows *rows, const char *dist, const axes *a)
{
    int k = 0, legend = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const tdm_bench_row *r = &rows->v[i];
        int first = has_dist(r, dist);
        for (size_t j = 0; first && j < i; j++)
            if (has_dist(&rows->v[j], dist) && same_series(&rows->v[j], r))
                first = 0;
        if (!first)
            continue;
        const char *c = r->device < 0 ? "#000" : colors[k++ % 10];
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", c,
                r->device < 0 ? " stroke-dasharray='6 4'" : "");
        for (size_t j = i; j < rows->n; j++)
            if (has_dist(&rows->v[j], dist) && same_series(&rows->v[j], r))
                fprintf(f, "%.1f,%.1f ", px(a, (double)rows->v[j].n),
                        py(a, rows->v[j].kernel_mis));
        fprintf(f, "'/>\n");
        for (size_t j = i; j < rows->n; j++)
            if (has_dist(&rows->v[j], dist) && same_series(&rows->v[j], r))
                fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
                        px(a, (double)rows->v[j].n), py(a, rows->v[j].kernel_mis), c);
        int ly = MT + 10 + 18 * legend++;
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='2'%s/>\n",
                W - MR + 12, ly, W - MR + 36, ly, c,
                r->device < 0 ? " stroke-dasharray='6 4'" : "");
        if (r->device < 0)
            fprintf(f, "<text x='%d' y='%d' font-size='11'>%s (%.24s)</text>\n", W - MR + 42,
                    ly + 4, r->codec, r->device_name);
        else
            fprintf(f, "<text x='%d' y='%d' font-size='11'>%s (%d: %.20s)</text>\n",
                    W - MR + 42, ly + 4, r->codec, r->device, r->device_name);
    }
}

void tdm_svg_text(FILE *f, const char *s)
{
    for (const char *p = s; *p; p++) /* escape what XML needs */
        fputs(*p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;" : (char[2]){*p, 0},
              f);
}

FILE *tdm_svg_begin(tdm_outfile *out, const char *path, int w, int h, int title_x,
                    const char *title)
{
    tdm_err err = {0};
    if (tdm_outfile_open(out, path, &err) != TDM_OK) {
        fprintf(stderr, "tandem bench: %s\n", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return NULL;
    }
    FILE *f = out->f;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
               "font-family='sans-serif' font-size='12'>\n<rect width='100%%' height='100%%' "
               "fill='white'/>\n", w, h);
    fprintf(f, "<text x='%d' y='28' text-anchor='middle' font-size='15'>", title_x);
    tdm_svg_text(f, title);
    fprintf(f, "</text>\n");
    return f;
}

int tdm_svg_end(tdm_outfile *out)
{
    tdm_err err = {0};
    fprintf(out->f, "</svg>\n");
    int rc = tdm_outfile_commit(out, &err); /* renamed over path only when complete */
    if (rc != TDM_OK)
        fprintf(stderr, "tandem bench: %s\n", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
}

int tdm_bench_write_svg(const char *path, const tdm_bench_rows *rows, const char *dist,
                        const char *title)
{
    tdm_outfile out;
    FILE *f = tdm_svg_begin(&out, path, W, H, (ML + W - MR) / 2, title);
    if (!f)
        return -1;
    axes a;
    find_axes(rows, dist, &a);
    draw_grid(f, &a);
    draw_series(f, rows, dist, &a);
    return tdm_svg_end(&out);
}
