/* `tandem bench load`: the table, the highest sustained rates, the CSV and
 * the plot of latency against offered rate. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd_bench.h"
#include "cmd_bench_load.h"
#include "common/fsutil.h"

static double pctof(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

static const char *verdict(const tdm_bl_point *p)
{
    return p->stopped ? "stopped" : p->ok ? "ok" : "over";
}

void tdm_bl_print_header(FILE *f)
{
    fprintf(f, "%-7s %-8s %9s %8s %9s %8s %8s %8s %8s %8s %6s %5s %5s %6s %6s %5s %-7s %s\n",
            "memory", "policy", "rate", "arrived", "q/s", "mean ms", "p50", "p95", "p99", "p99.9",
            "miss%", "late", "drop", "bmode%", "batch%", "hit%", "verdict",
            "lanes: util/share");
}

void tdm_bl_print_point(FILE *f, const tdm_bl *b, const tdm_bl_point *p)
{
    char rate[24], hit[16];
    snprintf(rate, sizeof rate, "%s%.6g", p->probe ? "*" : "", p->rate);
    if (p->hit_rate < 0)
        snprintf(hit, sizeof hit, "-");
    else
        snprintf(hit, sizeof hit, "%.1f", p->hit_rate * 100);
    fprintf(f, "%-7.7s %-8s %9s %8llu %9.1f %8.2f %8.2f %8.2f %8.2f %8.2f %6.2f %5llu %5llu "
               "%6.1f %6.1f %5s %-7s", b->o.mem[p->mem].label, tdm_policy_name(p->policy),
            rate, (unsigned long long)p->arrivals, p->tput, p->mean, p->p50, p->p95, p->p99,
            p->p999, pctof(p->misses, p->arrivals), (unsigned long long)p->late,
            (unsigned long long)p->dropped, pctof(p->batch_mode, p->answered),
            pctof(p->batched, p->answered), hit, verdict(p));
    for (int l = 0; l < p->nlanes; l++)
        fprintf(f, " %c%d %.0f%%/%.0f%%", p->lane_gpu[l] ? 'G' : 'C', l, p->util[l] * 100,
                pctof(p->share[l], p->answered));
    fprintf(f, "\n");
}

static int policy_index(const tdm_bl *b, int pol)
{
    for (size_t i = 0; i < b->o.npol; i++)
        if (b->o.policies[i] == pol)
            return (int)i;
    return -1;
}

void tdm_bl_print_max(FILE *f, const tdm_bl *b)
{
    fprintf(f, "\nhighest sustained rate (p95 <= %g ms and the %g ms deadline; rate search to "
               "%g %%)\n", b->o.budget_p95_ms, b->o.deadline_ms, b->o.precision * 100);
    fprintf(f, "%-7s %-8s %10s %8s %8s %8s %8s %6s %11s %9s\n", "memory", "policy", "max q/s",
            "p50 ms", "p95", "p99", "p99.9", "miss%", "x cpu-only", "x full");
    int cpu = policy_index(b, TDM_POLICY_CPU_ONLY);
    for (size_t m = 0; m < b->o.nmem; m++)
        for (size_t pi = 0; pi < b->o.npol; pi++) {
            double r = b->max_rate[m][pi];
            long at = b->max_at[m][pi];
            char xcpu[16] = "-", xfull[16] = "-";
            if (cpu >= 0 && b->max_rate[m][cpu] > 0 && (int)pi != cpu)
                snprintf(xcpu, sizeof xcpu, "%.2f", r / b->max_rate[m][cpu]);
            if (m > 0 && !b->o.mem[0].bytes && b->max_rate[0][pi] > 0) /* against resident */
                snprintf(xfull, sizeof xfull, "%.2f", r / b->max_rate[0][pi]);
            fprintf(f, "%-7.7s %-8s ", b->o.mem[m].label, tdm_policy_name(b->o.policies[pi]));
            if (at < 0) {
                fprintf(f, "%10s %8s %8s %8s %8s %6s %11s %9s\n", "none", "-", "-", "-", "-",
                        "-", "-", "-");
                continue;
            }
            const tdm_bl_point *p = &b->set.v[at];
            fprintf(f, "%10.6g %8.2f %8.2f %8.2f %8.2f %6.2f %11s %9s\n", r, p->p50, p->p95,
                    p->p99, p->p999, pctof(p->misses, p->arrivals), xcpu, xfull);
        }
    for (size_t m = 0; b->cut && m < b->o.nmem; m++)
        for (size_t pi = 0; pi < b->o.npol; pi++)
            if (b->searched[m][pi] != 1)
                fprintf(f, "%-7.7s %-8s cut by --time-limit: %s\n", b->o.mem[m].label,
                        tdm_policy_name(b->o.policies[pi]),
                        b->max_at[m][pi] >= 0 ? "the rate above is sustained, a higher one "
                                                "may be"
                                              : "no sustained rate found yet");

}

int tdm_bl_write_csv(const char *path, const tdm_bl *b)
{
    tdm_outfile out;
    tdm_err err = {0};
    if (tdm_outfile_open(&out, path, &err) != TDM_OK) {
        fprintf(stderr, "tandem bench load: %s\n", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return -1;
    }
    FILE *f = out.f;
    fprintf(f, "memory,memory_bytes,policy,rate,probe,arrivals,answered,failed,dropped,late,"
               "late_max_ms,throughput,mean_ms,p50_ms,p95_ms,p99_ms,p999_ms,max_ms,deadline_ms,"
               "misses,miss_pct,engine_misses,mismatches,batch_mode_pct,batched_pct,"
               "other_policy,stolen,promoted,mode_switches,cache_hit_rate,stopped,sustained,"
               "max_inflight,senders,wall_s,lanes\n");
    for (size_t i = 0; i < b->set.n; i++) {
        const tdm_bl_point *p = &b->set.v[i];
        const tdm_bl_mem *m = &b->o.mem[p->mem];
        fprintf(f, "%s,%llu,%s,%.6g,%d,%llu,%llu,%llu,%llu,%llu,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f,"
                   "%.4f,%.4f,%g,%llu,%.3f,%llu,%llu,%.2f,%.2f,%llu,%llu,%llu,%llu,%.4f,%d,%d,"
                   "%llu,%u,%.3f,", m->label, (unsigned long long)m->bytes,
                tdm_policy_name(p->policy), p->rate, p->probe,
                (unsigned long long)p->arrivals, (unsigned long long)p->answered,
                (unsigned long long)p->failed, (unsigned long long)p->dropped,
                (unsigned long long)p->late, p->late_max_ms, p->tput, p->mean, p->p50, p->p95,
                p->p99, p->p999, p->max, b->o.deadline_ms, (unsigned long long)p->misses,
                pctof(p->misses, p->arrivals), (unsigned long long)p->eng_misses,
                (unsigned long long)p->mismatches, pctof(p->batch_mode, p->answered),
                pctof(p->batched, p->answered), (unsigned long long)p->other_policy,
                (unsigned long long)p->stolen, (unsigned long long)p->promoted,
                (unsigned long long)p->switches, p->hit_rate, p->stopped, p->ok,
                (unsigned long long)p->max_inflight, p->senders, p->wall);
        for (int l = 0; l < p->nlanes; l++) /* lane kind+index:utilization:share */
            fprintf(f, "%s%s%d:%.4f:%.4f", l ? ";" : "", p->lane_gpu[l] ? "gpu" : "cpu", l,
                    p->util[l], p->answered ? (double)p->share[l] / (double)p->answered : 0);
        fprintf(f, "\n");
    }
    int rc = tdm_outfile_commit(&out, &err); /* renamed over path only when complete */
    if (rc != TDM_OK)
        fprintf(stderr, "tandem bench load: %s\n", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
}

/* ---- the plot: a panel per memory setting, log-log */

enum { PW = 520, PH = 340, ML = 80, MT = 60, MB = 56, GAP = 40, LEG = 230 };

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#17becf"};

typedef struct axes {
    double x0, x1, y0, y1; /* log10 rate, log10 ms */
    int left, top;
} axes;

static double px(const axes *a, double rate)
{
    return a->left + (log10(rate) - a->x0) / (a->x1 - a->x0) * PW;
}

static double py(const axes *a, double ms)
{
    double t = (log10(ms > 1e-3 ? ms : 1e-3) - a->y0) / (a->y1 - a->y0);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return a->top + (1 - t) * PH;
}

static void find_range(const tdm_bl *b, axes *a)
{
    double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
    for (size_t i = 0; i < b->set.n; i++) {
        const tdm_bl_point *p = &b->set.v[i];
        xlo = p->rate < xlo ? p->rate : xlo;
        xhi = p->rate > xhi ? p->rate : xhi;
        if (p->stopped || !p->answered)
            continue;
        double lo = p->p50 > 1e-3 ? p->p50 : 1e-3;
        ylo = lo < ylo ? lo : ylo;
        yhi = p->p99 > yhi ? p->p99 : yhi;
    }
    double lim = b->o.deadline_ms;
    yhi = lim > yhi ? lim : yhi;
    if (xhi <= 0)
        xlo = 1, xhi = 10;
    if (ylo > yhi)
        ylo = 1, yhi = 10;
    a->x0 = floor(log10(xlo));
    a->x1 = ceil(log10(xhi));
    if (a->x1 <= a->x0)
        a->x1 = a->x0 + 1;
    a->y0 = floor(log10(ylo));
    a->y1 = ceil(log10(yhi * 1.5));
    if (a->y1 <= a->y0)
        a->y1 = a->y0 + 1;
}

static void draw_frame(FILE *f, const axes *a, const tdm_bl *b, const char *label)
{
    fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>\n",
            a->left, a->top, PW, PH);
    for (double x = a->x0; x <= a->x1 + 1e-9; x += 1)
        for (int m = 1; m < 10 && x + log10(m) <= a->x1 + 1e-9; m++) {
            double X = px(a, m * pow(10, x));
            fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='%s'/>\n", X, a->top,
                    X, a->top + PH, m == 1 ? "#ccc" : "#f0f0f0");
            if (m == 1 || m == 2 || m == 5)
                fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle'>%g</text>\n", X,
                        a->top + PH + 16, m * pow(10, x));
        }
    for (double y = a->y0; y <= a->y1 + 1e-9; y += 1) {
        double Y = py(a, pow(10, y));
        fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ccc'/>\n", a->left, Y,
                a->left + PW, Y);
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end'>%g</text>\n", a->left - 6, Y + 4,
                pow(10, y));
    }
    double dl = py(a, b->o.deadline_ms), bu = py(a, b->o.budget_p95_ms);
    fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#c00' stroke-dasharray='2 3'/>"
               "<text x='%d' y='%.1f' font-size='10' fill='#c00' text-anchor='end'>deadline"
               "</text>\n", a->left, dl, a->left + PW, dl, a->left + PW - 4, dl - 3);
    if (b->o.find_max && b->o.budget_p95_ms != b->o.deadline_ms)
        fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#888' "
                   "stroke-dasharray='2 3'/><text x='%d' y='%.1f' font-size='10' fill='#888' "
                   "text-anchor='end'>p95 budget</text>\n", a->left, bu, a->left + PW, bu,
                a->left + PW - 4, bu - 3);
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='13'>device memory: ",
            a->left + PW / 2, a->top - 8);
    tdm_svg_text(f, label);
    fprintf(f, "</text>\n<text x='%d' y='%d' text-anchor='middle'>offered rate (queries / s, "
               "Poisson arrivals)</text>\n<text transform='translate(%d %d) rotate(-90)' "
               "text-anchor='middle'>latency from arrival (ms)</text>\n", a->left + PW / 2,
            a->top + PH + 36, a->left - 52, a->top + PH / 2);
}

/* Latency at percentile `which` (0 p50, 1 p95, 2 p99) of point p. */
static double lat(const tdm_bl_point *p, int which)
{
    return which == 0 ? p->p50 : which == 1 ? p->p95 : p->p99;
}

/* The points of one policy and memory setting by rate (insertion sort of
 * indices; a handful to a few dozen). */
static size_t sorted_points(const tdm_bl *b, int pol, int mem, size_t *idx, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < b->set.n && n < cap; i++) {
        const tdm_bl_point *p = &b->set.v[i];
        if (p->policy != pol || p->mem != mem)
            continue;
        size_t j = n++;
        for (; j > 0 && b->set.v[idx[j - 1]].rate > p->rate; j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
    return n;
}

static void draw_policy(FILE *f, const axes *a, const tdm_bl *b, int pi, int mem)
{
    static const char *const dash[] = {" stroke-dasharray='2 3'", "", " stroke-dasharray='7 4'"};
    const char *c = colors[pi % 8];
    size_t idx[512];
    size_t n = sorted_points(b, b->o.policies[pi], mem, idx, 512);
    for (int w = 0; w < 3; w++) {
        int drawn = 0;
        for (size_t i = 0; i < n; i++) {
            const tdm_bl_point *p = &b->set.v[idx[i]];
            if (p->stopped || !p->answered)
                continue;
            if (!drawn++)
                fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='%s'%s points='", c,
                        w == 1 ? "2.2" : "1.4", dash[w]);
            fprintf(f, "%.1f,%.1f ", px(a, p->rate), py(a, lat(p, w)));
        }
        if (drawn)
            fprintf(f, "'/>\n");
    }
    for (size_t i = 0; i < n; i++) {
        const tdm_bl_point *p = &b->set.v[idx[i]];
        double X = px(a, p->rate);
        if (p->stopped || !p->answered) /* hopeless: a cross on the top edge */
            fprintf(f, "<path d='M%.1f %d l8 8 m0 -8 l-8 8' stroke='%s' stroke-width='2'/>\n",
                    X - 4, a->top + 2, c);
        else
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", X, py(a, p->p95), c);
    }
}

static void draw_legend(FILE *f, const tdm_bl *b, int x, int y)
{
    for (size_t pi = 0; pi < b->o.npol; pi++, y += 17)
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='3'/>"
                   "<text x='%d' y='%d' font-size='11'>%s</text>\n", x, y, x + 24, y,
                colors[pi % 8], x + 30, y + 4, tdm_policy_name(b->o.policies[pi]));
    static const char *const what[] = {"p50", "p95 (dots: points)", "p99",
                                       "x: stopped (backlog)"};
    static const char *const dash[] = {" stroke-dasharray='2 3'", "", " stroke-dasharray='7 4'",
                                       " stroke-opacity='0'"};
    y += 10;
    for (int i = 0; i < 4; i++, y += 17)
        fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#444' stroke-width='2'%s/>"
                   "<text x='%d' y='%d' font-size='11'>%s</text>\n", x, y, x + 24, y, dash[i],
                x + 30, y + 4, what[i]);
}

int tdm_bl_write_svg(const char *path, const tdm_bl *b, const char *title)
{
    int np = b->o.nmem ? (int)b->o.nmem : 1;
    int w = ML + np * PW + (np - 1) * (ML + GAP) + GAP + LEG, h = MT + PH + MB + 20;
    tdm_outfile out;
    FILE *f = tdm_svg_begin(&out, path, w, h, (w - LEG) / 2, title);
    if (!f)
        return -1;
    axes a;
    find_range(b, &a);
    for (int m = 0; m < np; m++) {
        a.left = ML + m * (PW + ML + GAP);
        a.top = MT + 10;
        char label[64];
        const tdm_bl_mem *mm = &b->o.mem[m];
        if (mm->bytes)
            snprintf(label, sizeof label, "%s (%.1f MB)", mm->label, (double)mm->bytes / 1e6);
        else
            snprintf(label, sizeof label, "%s (index resident)", mm->label);
        draw_frame(f, &a, b, label);
        for (size_t pi = 0; pi < b->o.npol; pi++)
            draw_policy(f, &a, b, (int)pi, m);
    }
    draw_legend(f, b, w - LEG + 10, MT + 20);
    return tdm_svg_end(&out);
}
