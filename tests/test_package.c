/*
 * test_package.c: cctrace as users install it.  `make install` puts the
 * binary, the man pages and the bash completion where PREFIX, DESTDIR,
 * BINDIR and MANDIR say; the man pages format without a warning and
 * document every subcommand and option `cctrace --help` lists; the
 * completion offers what the command line takes; and the Debian package
 * that debian/ describes builds, unpacks into a scratch root (dpkg -x, not
 * installed system-wide) and runs from there: `cctrace --version` says
 * the changelog's version, and a sample's bug is found.
 *
 * Nothing is compiled into the source tree: `make install` copies the
 * cctrace under test ($CCTRACE, e.g. build-asan/cctrace) with make -o, and
 * the package is built from a copy of the tracked files in a temporary
 * directory, which is also where dpkg-buildpackage puts its output.
 */
#include "harness.h"

#include <glob.h>
#include <libgen.h>
#include <sys/stat.h>

/* The nested make and dpkg-buildpackage must not inherit the jobserver or
 * the variables of the make that runs the suite. */
static void package_init(void)
{
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("MAKEOVERRIDES");
}

static void package_fini(void)
{
	h_cleanup();
}

TestSuite(package, .init = package_init, .fini = package_fini, .timeout = 300);

/* A fresh scratch directory; removed by the caller with rm_tree(). */
static char *scratch(void)
{
	char *dir = h_fmt("/tmp/cctrace-package-XXXXXX");

	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	return dir;
}

static void rm_tree(const char *dir)
{
	struct h_result r = H_RUN("rm", "-rf", dir);

	cr_expect_eq(r.code, 0, "rm -rf %s: %s", dir, r.err);
	h_result_free(&r);
}

static bool is_file(const char *path, mode_t need_mode)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & need_mode) == need_mode;
}

/* An absolute path for the cctrace under test, and the build directory
 * that holds it (what `make install` copies from). */
static char *cctrace_abs(void)
{
	char *path = realpath(h_cctrace(), NULL), *kept;

	cr_assert(path, "cannot find %s: %s", h_cctrace(), strerror(errno));
	kept = h_fmt("%s", path);
	free(path);
	return kept;
}

static char *build_dir(const char *cctrace)
{
	char *dir = h_fmt("%s", cctrace), *root = realpath(".", NULL);
	char *result;

	dir = dirname(dir);
	cr_assert(root);
	/* ./cctrace is a copy of build/cctrace (the Makefile's `cctrace` rule). */
	result = strcmp(dir, root) == 0 ? h_fmt("%s/build", root) : h_fmt("%s", dir);
	free(root);
	return result;
}

/* `make install` (or uninstall) into destdir with extra variables; nothing
 * is rebuilt: $(BUILD)/cctrace is taken as it is (make -o). */
static struct h_result make_install(const char *target, const char *destdir, const char *prefix,
				    const char *extra)
{
	const char *build = build_dir(cctrace_abs());

	return H_RUN("make", "-s", "--no-print-directory", "-o", h_fmt("%s/cctrace", build),
		     h_fmt("BUILD=%s", build), h_fmt("DESTDIR=%s", destdir),
		     h_fmt("PREFIX=%s", prefix), extra ? extra : "V=", target);
}

Test(package, make_install_honours_prefix_and_destdir)
{
	char *dest = scratch();
	struct h_result r = make_install("install", dest, "/usr", NULL), run;
	const char *bin = h_fmt("%s/usr/bin/cctrace", dest);

	cr_assert_eq(r.code, 0, "make install failed: %s%s", r.out, r.err);
	cr_assert(is_file(bin, 0755), "no executable %s", bin);
	cr_assert(is_file(h_fmt("%s/usr/share/man/man1/cctrace.1", dest), 0644));
	cr_assert(is_file(h_fmt("%s/usr/share/man/man5/cctrace-schedule.5", dest), 0644));
	cr_assert(is_file(h_fmt("%s/usr/share/bash-completion/completions/cctrace", dest), 0644));

	/* The installed binary is the one under test, and it runs. */
	run = H_RUN(bin, "watchpoints");
	cr_assert(run.code == 0 || run.code == 1, "cctrace watchpoints exited %d: %s", run.code,
		  run.err);
	cr_assert(strncmp(run.out, run.code == 0 ? "hw:" : "sw:", 3) == 0, "%s", run.out);

	r = make_install("uninstall", dest, "/usr", NULL);
	cr_assert_eq(r.code, 0, "make uninstall failed: %s%s", r.out, r.err);
	r = H_RUN("find", dest, "-type", "f");
	cr_assert_str_empty(r.out, "left behind by make uninstall:\n%s", r.out);
	rm_tree(dest);
}

Test(package, make_install_honours_bindir_and_mandir)
{
	char *dest = scratch();
	struct h_result r = make_install("install", dest, "/opt/cc", "BINDIR=/opt/cc/sbin");

	cr_assert_eq(r.code, 0, "make install failed: %s%s", r.out, r.err);
	cr_assert(is_file(h_fmt("%s/opt/cc/sbin/cctrace", dest), 0755));
	cr_assert(is_file(h_fmt("%s/opt/cc/share/man/man1/cctrace.1", dest), 0644));
	r = make_install("install", dest, "/opt/cc", "MANDIR=/opt/man");
	cr_assert_eq(r.code, 0, "make install failed: %s%s", r.out, r.err);
	cr_assert(is_file(h_fmt("%s/opt/man/man5/cctrace-schedule.5", dest), 0644));
	rm_tree(dest);
}

/* groff's warnings (-ww) about the page at path, "" when there are none. */
static char *man_warnings(const char *path)
{
	struct h_result r = H_RUN("groff", "-man", "-Tutf8", "-ww", "-z", path);

	cr_assert_eq(r.code, 0, "groff %s failed: %s", path, r.err);
	return r.err;
}

Test(package, man_pages_format_without_warnings)
{
	cr_assert_str_empty(man_warnings("man/cctrace.1"));
	cr_assert_str_empty(man_warnings("man/cctrace-schedule.5"));
}

/* The words of `cctrace CMD --help` that start with "--", each once. */
static void help_options(const char *cmd, char ***opts, size_t *n)
{
	struct h_result r = cmd ? H_RUN(h_cctrace(), cmd, "--help") : H_RUN(h_cctrace(), "--help");
	char *p = r.out;

	cr_assert_eq(r.code, 0, "cctrace %s --help exited %d", cmd ? cmd : "", r.code);
	*opts = NULL;
	*n = 0;
	while ((p = strstr(p, "--")) != NULL) {
		size_t len = 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");

		if (len > 2 && (p == r.out || p[-1] == ' ' || p[-1] == '[')) {
			*opts = realloc(*opts, sizeof(**opts) * (*n + 1));
			cr_assert(*opts);
			(*opts)[(*n)++] = h_fmt("%.*s", (int)len, p);
		}
		p += len;
	}
	cr_assert_gt(*n, 0, "cctrace %s --help lists no option", cmd ? cmd : "");
}

/* Option --x-y is written \-\-x\-y in roff. */
static char *roff_option(const char *opt)
{
	char *out = h_fmt("%*s", (int)(2 * strlen(opt)), ""), *o = out;

	for (; *opt; opt++) {
		if (*opt == '-')
			*o++ = '\\';
		*o++ = *opt;
	}
	*o = 0;
	return out;
}

Test(package, man_page_documents_every_command_and_option)
{
	static const char *const cmds[] = {"run",   "attach",	 "explore",    "test",
					   "shell", "typestate", "watchpoints"};
	char *page = h_read_file("man/cctrace.1", NULL);
	struct h_result usage = H_RUN(h_cctrace(), "--help");
	size_t i, j, n;
	char **opts;

	cr_assert(page);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cr_assert(strstr(usage.out, h_fmt("cctrace %s", cmds[i])),
			  "cctrace --help does not list %s", cmds[i]);
		cr_assert(strstr(page, h_fmt("\n.B %s", cmds[i])), "cctrace.1 lacks %s", cmds[i]);
		help_options(strcmp(cmds[i], "watchpoints") ? cmds[i] : NULL, &opts, &n);
		for (j = 0; j < n; j++)
			cr_expect(strstr(page, roff_option(opts[j])),
				  "cctrace.1 does not document %s (cctrace %s --help lists it)",
				  opts[j], cmds[i]);
		free(opts);
	}
	cr_assert(strstr(page, "CCTRACE_WATCHPOINTS"));
	cr_assert(strstr(page, ".SH EXIT STATUS"));
}

/* What Tab offers at the end of line, using completion file comp. */
static char *complete(const char *comp, const char *line)
{
	struct h_result r = H_RUN("tests/package/complete.sh", comp, line);

	cr_assert_eq(r.code, 0, "complete.sh '%s' exited %d: %s", line, r.code, r.err);
	cr_assert_str_empty(r.err, "completing '%s': %s", line, r.err);
	return r.out;
}

/* Whether word is one of the candidates, one a line. */
static bool offers(const char *candidates, const char *word)
{
	return strstr(h_fmt("\n%s", candidates), h_fmt("\n%s\n", word)) != NULL;
}

#define COMP "completion/cctrace.bash"

Test(package, completion_offers_commands_and_their_options)
{
	const char *me = cctrace_abs();
	char *c;

	c = complete(COMP, h_fmt("%s ", me));
	cr_assert(offers(c, "run") && offers(c, "attach") && offers(c, "explore") &&
		      offers(c, "shell") && offers(c, "watchpoints"),
		  "%s", c);
	c = complete(COMP, h_fmt("%s explore --st", me));
	cr_assert_str_eq(c, "--strategy=\n");
	c = complete(COMP, h_fmt("%s run --", me));
	cr_assert(offers(c, "--expect=") && offers(c, "--quiet") && !offers(c, "--exit-on-error"),
		  "%s", c);
	c = complete(COMP, h_fmt("%s shell --", me));
	cr_assert(offers(c, "--exit-on-error"), "%s", c);
	c = complete(COMP, h_fmt("%s run --watchpoints ", me));
	cr_assert_str_eq(c, "auto\nhw\nsw\n");
	c = complete(COMP, h_fmt("%s run --expect b", me));
	cr_assert_str_eq(c, "bug\n");
	c = complete(COMP, h_fmt("%s explore --strategy r", me));
	cr_assert_str_eq(c, "random\nrandom:\n"); /* random[:C] */
	c = complete(COMP, h_fmt("%s explore --strategy i", me));
	cr_assert_str_eq(c, "ipb\nidb\nib:\n");
}

Test(package, completion_offers_files_pids_and_functions)
{
	const char *me = cctrace_abs();
	char *c;

	c = complete(COMP, h_fmt("%s run samples/bank/lost-", me));
	cr_assert_str_eq(c, "samples/bank/lost-update.sched\n");
	c = complete(COMP, h_fmt("%s attach ", me));
	cr_assert(offers(c, h_fmt("%d", (int)getpid())), "no pid %d in:\n%s", (int)getpid(), c);
	c = complete(COMP, h_fmt("%s attach %d samples/bank/lost-", me, (int)getpid()));
	cr_assert_str_eq(c, "samples/bank/lost-update.sched\n");
	/* After -- the program, then its functions (and files). */
	c = complete(COMP, h_fmt("%s run --timeout 2s S -- samples/bank/ba", me));
	cr_assert(offers(c, "samples/bank/bank"), "%s", c);
	c = complete(COMP, h_fmt("%s run S -- samples/bank/bank wi", me));
	cr_assert_str_eq(c, "withdraw\n");
	c = complete(COMP, h_fmt("%s explore S --jobs 2 -- samples/bank/bank ", me));
	cr_assert(offers(c, "withdraw") && offers(c, "customer") && offers(c, "main"), "%s", c);
	cr_assert(!offers(c, "_start"), "C runtime names offered:\n%s", c);
}

/*
 * The Debian package: built from a copy of the source tree (the files git
 * knows, as they are in the working tree), unpacked with dpkg -x, and run.
 */
static char *copy_tree(const char *dir)
{
	char *src = h_fmt("%s/src", dir);
	struct h_result r;

	cr_assert(mkdir(src, 0755) == 0);
	r = H_RUN("bash", "-o", "pipefail", "-c",
		  h_fmt("git ls-files -z --cached --others --exclude-standard | "
			"tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C %s",
			src));
	cr_assert_eq(r.code, 0, "copying the tree: %s", r.err);
	cr_assert(is_file(h_fmt("%s/debian/rules", src), 0755));
	return src;
}

static char *build_deb(const char *dir)
{
	char *src = copy_tree(dir);
	const char *argv[] = {"sh", "-c",
			      h_fmt("cd %s && DEB_BUILD_OPTIONS='nocheck noddebs parallel=2' "
				    "dpkg-buildpackage -us -uc -b",
				    src),
			      NULL};
	struct h_result r = h_run(argv, 280);
	glob_t g;
	char *deb;

	cr_assert_eq(r.code, 0, "dpkg-buildpackage failed (%d):\n%s\n%s", r.code,
		     r.out_len > 4000 ? r.out + r.out_len - 4000 : r.out, r.err);
	cr_assert_eq(glob(h_fmt("%s/cctrace_*.deb", dir), 0, NULL, &g), 0, "no .deb in %s", dir);
	cr_assert_eq(g.gl_pathc, 1);
	deb = h_fmt("%s", g.gl_pathv[0]);
	globfree(&g);
	return deb;
}

/* The version of the newest entry of debian/changelog: "0.1.0" of
 * "cctrace (0.1.0) unstable; urgency=medium". */
static char *changelog_version(void)
{
	char *log = h_read_file("debian/changelog", NULL), *open, *close;

	cr_assert(log, "cannot read debian/changelog");
	open = strchr(log, '(');
	close = open ? strchr(open, ')') : NULL;
	cr_assert(open && close && strncmp(log, "cctrace (", 9) == 0, "%.80s", log);
	return h_fmt("%.*s", (int)(close - open - 1), open + 1);
}

Test(package, deb_builds_unpacks_and_runs_a_sample)
{
	char *dir = scratch(), *root = h_fmt("%s/root", dir), *deb = build_deb(dir);
	const char *bin = h_fmt("%s/usr/bin/cctrace", root);
	struct h_result r;
	char *c;

	r = H_RUN("dpkg-deb", "-f", deb, "Package", "Depends");
	cr_assert(strstr(r.out, "Package: cctrace\n"), "%s", r.out);
	cr_assert(strstr(r.out, "libcapstone") && strstr(r.out, "libdw"), "%s", r.out);
	r = H_RUN("dpkg-deb", "-x", deb, root);
	cr_assert_eq(r.code, 0, "dpkg-deb -x: %s", r.err);
	cr_assert(is_file(bin, 0755), "the package has no /usr/bin/cctrace");
	cr_assert(is_file(h_fmt("%s/usr/share/bash-completion/completions/cctrace", root), 0644));

	/* It says the version debian/changelog gives the package. */
	r = H_RUN(bin, "--version");
	cr_assert_eq(r.code, 0, "cctrace --version exited %d: %s", r.code, r.err);
	cr_assert_str_eq(r.out, h_fmt("cctrace %s\n", changelog_version()));

	/* The packaged cctrace finds the bank sample's lost update. */
	r = H_RUN(bin, "run", "--expect", "bug", "samples/bank/lost-update.sched", "--",
		  "samples/bank/bank");
	cr_assert_eq(r.code, 0, "packaged cctrace: exit %d\n%s", r.code, r.err);
	cr_assert(strstr(r.err, "cctrace: bug: assertion failed"), "%s", r.err);

	/* Its man pages, as man reads them (compressed), without a warning. */
	r = H_RUN("man", "--warnings", "-l", h_fmt("%s/usr/share/man/man1/cctrace.1.gz", root));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_empty(r.err);
	cr_assert(strstr(r.out, "EXIT STATUS"), "%s", r.out);
	r = H_RUN("man", "--warnings", "-l",
		  h_fmt("%s/usr/share/man/man5/cctrace-schedule.5.gz", root));
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_empty(r.err);

	/* Its completion, completing for the packaged cctrace. */
	c = complete(h_fmt("%s/usr/share/bash-completion/completions/cctrace", root),
		     h_fmt("%s ", bin));
	cr_assert(offers(c, "run") && offers(c, "explore"), "%s", c);
	rm_tree(dir);
}
