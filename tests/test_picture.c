/*
 * test_picture.c: the picture of a found bug (DIR/bug-N.html) is a page
 * with one column per thread and the failing event marked, and it renders:
 * headless Chromium (Debian's chromium, installed by `make deps`) takes a
 * screenshot, which must not be blank.  No chromium is a failure, not a
 * skip: CI runs make deps first.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char g_dir[] = "/tmp/cctrace-picture-XXXXXX";

static void setup(void)
{
	cr_assert(mkdtemp(g_dir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	char *cmd = h_fmt("rm -rf '%s'", g_dir);

	(void)!system(cmd);
}

TestSuite(picture, .init = setup, .fini = teardown, .timeout = 300);

/* Distinct threads named in the trace lines of bug-1.txt, plus the thread
 * the outcome names: the columns the picture must have. */
static int threads_of_report(const char *txt)
{
	char names[64][32];
	int n = 0, i;
	const char *at;

	for (at = txt; at && *at; at = strchr(at, '\n'), at = at ? at + 1 : NULL) {
		char name[32];

		if (sscanf(at, "[ %*f ms] %31s", name) != 1 &&
		    sscanf(at, "cctrace: bug: %31[p0-9.t]", name) != 1)
			continue;
		for (i = 0; i < n && strcmp(names[i], name) != 0; i++)
			;
		if (i == n && n < 64)
			snprintf(names[n++], sizeof(names[0]), "%s", name);
	}
	return n;
}

static int occurrences(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)); text += strlen(needle))
		n++;
	return n;
}

static bool chromium_installed(void)
{
	return system("command -v chromium >/dev/null 2>&1") == 0;
}

/* The share of the most frequent colour among the screenshot's pixels. */
static double commonest_colour_share(const char *png_path, int *ncolours)
{
	png_image img = {.version = PNG_IMAGE_VERSION};
	png_bytep px;
	size_t i, n, best = 0;
	uint32_t *seen;
	size_t *counts, nseen = 0, j;

	cr_assert(png_image_begin_read_from_file(&img, png_path), "%s: %s", png_path, img.message);
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	cr_assert(px);
	cr_assert(png_image_finish_read(&img, NULL, px, 0, NULL), "%s", img.message);
	n = (size_t)img.width * img.height;
	/* A page has few colours; count up to 4096 of them. */
	seen = calloc(4096, sizeof(*seen));
	counts = calloc(4096, sizeof(*counts));
	cr_assert(seen && counts);
	for (i = 0; i < n; i++) {
		uint32_t c =
		    (uint32_t)px[3 * i] << 16 | (uint32_t)px[3 * i + 1] << 8 | px[3 * i + 2];

		for (j = 0; j < nseen && seen[j] != c; j++)
			;
		if (j == nseen && nseen < 4096)
			seen[nseen++] = c;
		if (j < nseen)
			counts[j]++;
	}
	for (j = 0; j < nseen; j++)
		if (counts[j] > best)
			best = counts[j];
	*ncolours = (int)nseen;
	free(px);
	free(seen);
	free(counts);
	return (double)best / (double)n;
}

static void check_picture(const char *sched, const char *strategy, const char *program,
			  int min_threads)
{
	char *out = h_fmt("%s/out", g_dir), *html, *txt, *shot = h_fmt("%s/shot.png", g_dir);
	const char *chromium_argv[16];
	struct h_result r;
	int columns, ncolours;
	double share;

	r = H_RUN(h_cctrace(), "explore", "-q", sched, "--strategy", strategy, "-o", out, "--",
		  program);
	cr_assert_eq(r.code, 1, "explore should find the bug (exit %d): %s", r.code, r.err);
	h_result_free(&r);
	html = h_read_file(h_fmt("%s/bug-1.html", out), NULL);
	txt = h_read_file(h_fmt("%s/bug-1.txt", out), NULL);
	cr_assert(html, "no %s/bug-1.html beside bug-1.sched", out);
	cr_assert(txt);
	columns = occurrences(html, "data-thread-column=");
	cr_assert_geq(columns, min_threads, "%d columns", columns);
	cr_assert_eq(columns, threads_of_report(txt), "one column per thread of the trace: %d",
		     columns);
	cr_assert_eq(occurrences(html, "data-failing-event"), 1, "the failing event is marked");
	cr_assert(strstr(html, "received ABRT"), "the outcome message is on the page");
	cr_assert(!strstr(html, "<script") && !strstr(html, "http://") && !strstr(html, "https://"),
		  "self-contained: no script, nothing fetched");
	cr_assert(chromium_installed(),
		  "chromium is not installed: run `make deps` (Debian package chromium)");
	memcpy(chromium_argv,
	       (const char *[]){"chromium", "--headless", "--no-sandbox", "--disable-gpu",
				"--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update",
				"--disable-sync", h_fmt("--user-data-dir=%s/profile", g_dir),
				h_fmt("--screenshot=%s", shot), "--window-size=1200,900",
				h_fmt("file://%s/bug-1.html", out), NULL},
	       14 * sizeof(char *));
	r = h_run(chromium_argv, 120);
	cr_assert(!r.timed_out, "chromium did not finish: %s", r.err);
	h_result_free(&r);
	share = commonest_colour_share(shot, &ncolours);
	cr_assert_geq(ncolours, 2, "the screenshot is blank");
	cr_assert_lt(share, 0.97, "the screenshot is nearly blank: one colour covers %.1f%%",
		     share * 100);
	h_free(html);
	h_free(txt);
}

Test(picture, bank_lost_update_has_a_column_per_thread_and_renders)
{
	check_picture("samples/bank/withdraw.search", "dfs", "samples/bank/bank", 2);
}

Test(picture, bbuf2_four_threads_render)
{
	check_picture("samples/bbuf2/take-empty.search", "cb:2", "samples/bbuf2/bbuf2", 3);
}
