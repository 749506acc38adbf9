/*
 * Opening and closing a sym_space: which ELF files make up the address space.
 *
 * A live view hands /proc/PID/maps to dwfl_linux_proc_report, which only
 * records module names and ranges: ELF files, symbol tables and DWARF are
 * opened by libdwfl the first time a lookup needs them, so opening a live
 * view costs a read of the maps file and nothing more.
 *
 * An offline view reports the program and, recursively, every DT_NEEDED
 * library with dwfl_report_offline.  Libraries are searched the way ld.so
 * does it: DT_RPATH (ignored when DT_RUNPATH is present), LD_LIBRARY_PATH,
 * DT_RUNPATH, then the system directories ($ORIGIN is expanded, ld.so.cache
 * is not read).  libdwfl lays offline modules out one after the other, so
 * its addresses are not link-time addresses; symi_space_out_addr turns them back
 * into link-time addresses by subtracting each module's bias.
 *
 * sym_refresh builds a fresh Dwfl rather than updating the old one: a
 * module dropped by dwfl_report_end would be freed, and with it strings and
 * DIEs already handed out.  Old sessions are retired and freed by sym_close.
 *
 * The module list is kept in our own array with the executable first, which
 * is the order every lookup uses ("the executable's definition wins").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static const char *const system_dirs[] = {
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* --- the module list --- */

struct mod_list {
	struct sym_mod *mods;
	size_t n, cap;
};

static int collect_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	struct mod_list *l = arg;
	struct sym_mod *m;

	(void)userdata;
	if (symi_reserve(&l->mods, &l->cap, l->n, sizeof(*l->mods)) < 0)
		return DWARF_CB_ABORT;
	m = &l->mods[l->n++];
	memset(m, 0, sizeof(*m));
	m->mod = mod;
	m->name = name;
	m->base = base_name(name);
	m->low = start;
	dwfl_module_info(mod, NULL, NULL, &m->high, NULL, NULL, NULL, NULL);
	return DWARF_CB_OK;
}

/* The path of the executable, to recognise its module. */
static char *exe_path(const struct sym_space *s)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	if (!s->pid)
		return realpath(s->path, NULL);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

static bool is_exe_module(const struct sym_space *s, const struct sym_mod *m, const char *exe)
{
	char *real;
	bool same;

	if (!exe)
		return false;
	if (strcmp(m->name, exe) == 0)
		return true;
	if (s->pid)
		return false;
	real = realpath(m->name, NULL);
	same = real && strcmp(real, exe) == 0;
	free(real);
	return same;
}

static void order_as_ld_so_searches(const struct sym_space *s, struct mod_list *l);

/* Fill s->mods from s->dwfl, executable first. */
int symi_space_load_modules(struct sym_space *s)
{
	struct mod_list l = {0};
	char *exe = exe_path(s);
	size_t i;

	if (dwfl_getmodules(s->dwfl, collect_module, &l, 0) != 0)
		goto fail;
	for (i = 0; i < l.n; i++) {
		if (!is_exe_module(s, &l.mods[i], exe))
			continue;
		struct sym_mod tmp = l.mods[i];

		memmove(&l.mods[1], &l.mods[0], i * sizeof(tmp));
		l.mods[0] = tmp;
		l.mods[0].is_exe = true;
		break;
	}
	free(exe);
	order_as_ld_so_searches(s, &l);
	free(s->mods);
	s->mods = l.mods;
	s->nmods = l.n;
	return 0;
fail:
	free(exe);
	free(l.mods);
	return -1;
}

struct sym_mod *symi_mod_of(struct sym_space *s, Dwfl_Module *mod)
{
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].mod == mod)
			return &s->mods[i];
	return NULL;
}

/* A library of the system directories (libc, ld.so...), not the program's. */
bool symi_mod_is_system(const struct sym_mod *m)
{
	size_t i, n;

	if (m->is_exe)
		return false;
	for (i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++) {
		n = strlen(system_dirs[i]);
		if (!strncmp(m->name, system_dirs[i], n) && m->name[n] == '/' &&
		    !strchr(m->name + n + 1, '/'))
			return true;
	}
	return false;
}

Dwarf_Addr symi_mod_elf_bias(const struct sym_mod *m)
{
	Dwarf_Addr bias = 0;

	if (!dwfl_module_getelf(m->mod, &bias))
		return 0;
	return bias;
}

/* A dwfl address as the caller sees it: run-time when live, link-time offline. */
uint64_t symi_space_out_addr(const struct sym_space *s, const struct sym_mod *m, Dwarf_Addr a)
{
	return s->pid ? a : a - symi_mod_elf_bias(m);
}

/* --- DT_NEEDED resolution for the offline view --- */

struct dyninfo {
	char **needed; /* as many as the file names */
	size_t nneeded, needed_cap;
	char *rpath, *runpath, *soname;
	int cls, machine;
};

static void dyninfo_free(struct dyninfo *d)
{
	size_t i;

	for (i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	free(d->needed);
	free(d->rpath);
	free(d->runpath);
	free(d->soname);
	memset(d, 0, sizeof(*d));
}

/* Every DT_NEEDED entry, however many (a library left out would make its
 * names look misspelt); only out of memory leaves the list short. */
static void add_needed(struct dyninfo *d, const char *name)
{
	if (symi_reserve(&d->needed, &d->needed_cap, d->nneeded, sizeof(*d->needed)) < 0)
		return;
	d->needed[d->nneeded] = strdup(name);
	if (d->needed[d->nneeded])
		d->nneeded++;
}

static void read_dynamic(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct dyninfo *d)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	GElf_Dyn dyn;
	const char *str;

	for (i = 0; data && i < n; i++) {
		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH &&
		    dyn.d_tag != DT_SONAME)
			continue;
		str = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
		if (!str)
			continue;
		if (dyn.d_tag == DT_NEEDED)
			add_needed(d, str);
		else if (dyn.d_tag == DT_RPATH && !d->rpath)
			d->rpath = strdup(str);
		else if (dyn.d_tag == DT_RUNPATH && !d->runpath)
			d->runpath = strdup(str);
		else if (dyn.d_tag == DT_SONAME && !d->soname)
			d->soname = strdup(str);
	}
}

/* Class, machine and dynamic entries of an ELF file; -1 if it is not ELF. */
static int read_dyninfo(const char *path, struct dyninfo *d)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	memset(d, 0, sizeof(*d));
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		goto out;
	d->cls = gelf_getclass(elf);
	d->machine = eh.e_machine;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			read_dynamic(elf, scn, &sh, d);
	rc = 0;
out:
	elf_end(elf);
	close(fd);
	return rc;
}

/* Does PATH exist and is it ELF for the same class and machine? */
static bool elf_fits(const char *path, const struct dyninfo *want)
{
	struct dyninfo d;
	bool ok;

	if (access(path, R_OK) != 0 || read_dyninfo(path, &d) < 0)
		return false;
	ok = d.cls == want->cls && d.machine == want->machine;
	dyninfo_free(&d);
	return ok;
}

/* --- the order ld.so searches for a symbol --- */

/* The module that DT_NEEDED entry (or LD_PRELOAD word) name stands for:
 * by its DT_SONAME, its file name, or (a path) its whole name. */
static size_t module_named(const struct mod_list *l, char *const *sonames, const bool *placed,
			   const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (placed[i])
			continue;
		if ((sonames[i] && strcmp(sonames[i], name) == 0) ||
		    strcmp(l->mods[i].base, name) == 0 || strcmp(l->mods[i].name, name) == 0)
			return i;
	}
	return l->n;
}

static void place(const struct mod_list *l, char *const *sonames, bool *placed, size_t *order,
		  size_t *n, const char *name)
{
	size_t i = module_named(l, sonames, placed, name);

	if (i == l->n)
		return;
	placed[i] = true;
	order[(*n)++] = i;
}

/* The words of the traced process's LD_PRELOAD, placed after the
 * executable as ld.so places them. */
static void place_preloads(const struct sym_space *s, const struct mod_list *l,
			   char *const *sonames, bool *placed, size_t *order, size_t *n)
{
	char path[64], *env = NULL, *p, *word, *save = NULL;
	size_t len = 0;
	FILE *f;

	if (!s->pid)
		return;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)s->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (getdelim(&env, &len, '\0', f) > 0) {
		if (strncmp(env, "LD_PRELOAD=", 11) != 0)
			continue;
		for (p = env + 11; (word = strtok_r(p, " :", &save)); p = NULL)
			place(l, sonames, placed, order, n, word);
		break;
	}
	free(env);
	fclose(f);
}

/*
 * A name defined in several modules (free in libasan and in libc, malloc
 * in a preloaded allocator) is, for the program, the definition ld.so
 * finds first: the executable's, then its preloads', then its DT_NEEDED
 * libraries' breadth first.  dwfl lists modules by address, which says
 * nothing of that, so lookups that take "the first module that defines
 * it" get the order here.  Modules outside that scope (ld.so, the vdso,
 * what the program dlopened) follow in dwfl's order.  Out of memory, the
 * order is left as it was.
 */
static void order_as_ld_so_searches(const struct sym_space *s, struct mod_list *l)
{
	char **sonames = calloc(l->n ? l->n : 1, sizeof(*sonames));
	size_t *order = calloc(l->n ? l->n : 1, sizeof(*order)), n = 0, k, i, j;
	bool *placed = calloc(l->n ? l->n : 1, sizeof(*placed));
	struct sym_mod *sorted = NULL;
	struct dyninfo *dyn = calloc(l->n ? l->n : 1, sizeof(*dyn));

	if (!sonames || !order || !placed || !dyn || !l->n || !l->mods[0].is_exe)
		goto out;
	for (i = 0; i < l->n; i++)
		if (read_dyninfo(l->mods[i].name, &dyn[i]) == 0)
			sonames[i] = dyn[i].soname;
	placed[0] = true;
	order[n++] = 0;
	place_preloads(s, l, sonames, placed, order, &n);
	for (k = 0; k < n; k++)
		for (j = 0; j < dyn[order[k]].nneeded; j++)
			place(l, sonames, placed, order, &n, dyn[order[k]].needed[j]);
	for (i = 0; i < l->n; i++)
		if (!placed[i])
			order[n++] = i;
	sorted = malloc(l->n * sizeof(*sorted));
	if (!sorted)
		goto out;
	for (k = 0; k < l->n; k++)
		sorted[k] = l->mods[order[k]];
	memcpy(l->mods, sorted, l->n * sizeof(*sorted));
out:
	for (i = 0; dyn && i < l->n; i++)
		dyninfo_free(&dyn[i]);
	free(dyn);
	free(sorted);
	free(placed);
	free(order);
	free(sonames);
}

/* DIR/NAME with a leading $ORIGIN in DIR replaced by ORIGIN. */
static int origin_path(char *buf, size_t size, const char *dir, const char *origin,
		       const char *name)
{
	int n;

	if (!strncmp(dir, "$ORIGIN", 7))
		n = snprintf(buf, size, "%s%s/%s", origin, dir + 7, name);
	else if (!strncmp(dir, "${ORIGIN}", 9))
		n = snprintf(buf, size, "%s%s/%s", origin, dir + 9, name);
	else
		n = snprintf(buf, size, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Search one colon-separated list; $ORIGIN is replaced by ORIGIN. */
static char *search_list(const char *list, const char *name, const char *origin,
			 const struct dyninfo *want)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *p = list, *end;
	size_t len;

	while (p && *p) {
		end = strchrnul(p, ':');
		len = (size_t)(end - p);
		if (len && len < sizeof(dir)) {
			memcpy(dir, p, len);
			dir[len] = '\0';
			if (origin_path(path, sizeof(path), dir, origin, name) < 0)
				goto next;
			if (elf_fits(path, want))
				return strdup(path);
		}
	next:
		p = *end ? end + 1 : NULL;
	}
	return NULL;
}

static char *find_library(const char *name, const char *origin, const struct dyninfo *obj)
{
	char *found = NULL;
	size_t i;

	if (strchr(name, '/'))
		return elf_fits(name, obj) ? strdup(name) : NULL;
	if (obj->rpath && !obj->runpath)
		found = search_list(obj->rpath, name, origin, obj);
	if (!found)
		found = search_list(getenv("LD_LIBRARY_PATH"), name, origin, obj);
	if (!found && obj->runpath)
		found = search_list(obj->runpath, name, origin, obj);
	for (i = 0; !found && i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		found = search_list(system_dirs[i], name, origin, obj);
	return found;
}

struct lib_queue {
	char **paths; /* realpaths, the program first */
	size_t n, cap;
};

static bool queue_has(const struct lib_queue *q, const char *path)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		if (!strcmp(q->paths[i], path))
			return true;
	return false;
}

/* Takes ownership of PATH. */
static int queue_add(struct lib_queue *q, char *path)
{
	char *real = realpath(path, NULL);

	free(path);
	if (!real)
		return 0;
	if (queue_has(q, real)) {
		free(real);
		return 0;
	}
	if (symi_reserve(&q->paths, &q->cap, q->n, sizeof(*q->paths)) < 0) {
		free(real);
		return -1;
	}
	q->paths[q->n++] = real;
	return 0;
}

static void queue_free(struct lib_queue *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		free(q->paths[i]);
	free(q->paths);
}

/* Add the libraries object Q->paths[i] needs. */
static int queue_expand(struct lib_queue *q, size_t i)
{
	char origin[PATH_MAX];
	struct dyninfo d;
	char *slash, *lib;
	size_t k;
	int rc = 0;

	if (read_dyninfo(q->paths[i], &d) < 0)
		return 0;
	snprintf(origin, sizeof(origin), "%s", q->paths[i]);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	for (k = 0; k < d.nneeded && rc == 0; k++) {
		lib = find_library(d.needed[k], origin, &d);
		if (lib)
			rc = queue_add(q, lib);
	}
	dyninfo_free(&d);
	return rc;
}

static int report_offline(struct sym_space *s, char *err, size_t errlen)
{
	struct lib_queue q = {0};
	size_t i;
	int rc = -1;

	if (!dwfl_report_offline(s->dwfl, s->path, s->path, -1)) {
		seterr(err, errlen, "%s: %s", s->path, dwfl_errmsg(-1));
		return -1;
	}
	if (queue_add(&q, strdup(s->path)) < 0)
		goto out;
	for (i = 0; i < q.n; i++)
		if (queue_expand(&q, i) < 0)
			goto out;
	for (i = 1; i < q.n; i++)
		dwfl_report_offline(s->dwfl, q.paths[i], q.paths[i], -1);
	rc = 0;
out:
	if (rc < 0)
		seterr(err, errlen, "%s: out of memory", s->path);
	queue_free(&q);
	return rc;
}

/* --- open, refresh, close --- */

static struct sym_space *space_new(void)
{
	struct sym_space *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->desc = calloc(DESC_CACHE_SIZE, sizeof(*s->desc));
	if (!s->desc) {
		free(s);
		return NULL;
	}
	elf_version(EV_CURRENT);
	return s;
}

struct sym_space *sym_open_program(const char *path, char *err, size_t errlen)
{
	struct sym_space *s = space_new();

	if (!s || !(s->path = strdup(path))) {
		seterr(err, errlen, "out of memory");
		goto fail;
	}
	if (access(path, R_OK) != 0) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (symi_check_elf_kind(path, path, err, errlen) < 0)
		goto fail;
	s->dwfl = dwfl_begin(&offline_callbacks);
	if (!s->dwfl) {
		seterr(err, errlen, "dwfl_begin: %s", dwfl_errmsg(-1));
		goto fail;
	}
	if (report_offline(s, err, errlen) < 0)
		goto fail;
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0 || symi_space_load_modules(s) < 0) {
		seterr(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
		goto fail;
	}
	return s;
fail:
	sym_close(s);
	return NULL;
}

/* A process whose main thread has ended (pthread_exit) keeps a zombie
 * leader, whose /proc/PID/maps reads empty: any live thread's maps are
 * the process's. */
static int report_task_maps(Dwfl *dwfl, pid_t pid)
{
	char path[96];
	struct dirent *de;
	DIR *d;
	FILE *f;
	int rc = ESRCH;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno;
	while (rc != 0 && (de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid <= 0 || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid, tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		rc = dwfl_linux_proc_maps_report(dwfl, f);
		fclose(f);
	}
	closedir(d);
	return rc;
}

static Dwfl *proc_dwfl(pid_t pid, char *err, size_t errlen)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);
	int rc;

	if (!dwfl) {
		seterr(err, errlen, "dwfl_begin: %s", dwfl_errmsg(-1));
		return NULL;
	}
	dwfl_report_begin(dwfl);
	rc = dwfl_linux_proc_report(dwfl, pid);
	if (rc != 0)
		rc = report_task_maps(dwfl, pid);
	if (rc != 0) {
		seterr(err, errlen, "pid %d: %s", (int)pid,
		       rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
		goto fail;
	}
	if (dwfl_report_end(dwfl, NULL, NULL) != 0) {
		seterr(err, errlen, "pid %d: %s", (int)pid, dwfl_errmsg(-1));
		goto fail;
	}
	return dwfl;
fail:
	dwfl_end(dwfl);
	return NULL;
}

struct sym_space *sym_open_pid(pid_t pid, char *err, size_t errlen)
{
	struct sym_space *s = space_new();
	char exe[64], shown[32];

	if (!s) {
		seterr(err, errlen, "out of memory");
		return NULL;
	}
	s->pid = pid;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	snprintf(shown, sizeof(shown), "pid %d", (int)pid);
	if (symi_check_elf_kind(exe, shown, err, errlen) < 0)
		goto fail;
	s->dwfl = proc_dwfl(pid, err, errlen);
	if (!s->dwfl)
		goto fail;
	if (symi_space_load_modules(s) < 0) {
		seterr(err, errlen, "pid %d: %s", (int)pid, dwfl_errmsg(-1));
		goto fail;
	}
	return s;
fail:
	sym_close(s);
	return NULL;
}

/* Forget everything derived from the module list. */
void symi_space_reset_caches(struct sym_space *s)
{
	size_t i;

	symi_strmap_free(&s->vars);
	symi_strmap_free(&s->enums);
	symi_strmap_free(&s->tls);
	symi_strmap_free(&s->locals);
	symi_strmap_free(&s->funcs);
	symi_strmap_free(&s->aliases);
	symi_strmap_free(&s->inlined);
	symi_strmap_free(&s->qualified);
	s->qualified_indexed = false;
	s->funcs_indexed = false;
	s->exe_indexed = s->all_indexed = false;
	s->own_code_known = 0; /* an exec may have changed the executable */
	s->exe_eh_hdr = 0;
	s->code_known = false;
	symi_tls_free(s);
	for (i = 0; i < DESC_CACHE_SIZE; i++)
		s->desc[i].valid = false;
	symi_unwind_flush(s);
}

int sym_refresh(struct sym_space *s)
{
	struct retired *r;
	Dwfl *fresh;

	if (!s->pid)
		return -1;
	r = malloc(sizeof(*r));
	fresh = r ? proc_dwfl(s->pid, NULL, 0) : NULL;
	if (!fresh) {
		free(r);
		return -1;
	}
	r->dwfl = s->dwfl;
	r->next = s->retired;
	s->retired = r;
	s->dwfl = fresh;
	symi_space_reset_caches(s);
	return symi_space_load_modules(s);
}

void sym_close(struct sym_space *s)
{
	struct retired *r, *next;

	if (!s)
		return;
	symi_unwind_free(s);
	symi_types_free(s);
	symi_tls_free(s);
	symi_strmap_free(&s->vars);
	symi_strmap_free(&s->enums);
	symi_strmap_free(&s->tls);
	symi_strmap_free(&s->locals);
	symi_strmap_free(&s->plain);
	symi_strmap_free(&s->funcs);
	symi_strmap_free(&s->aliases);
	symi_strmap_free(&s->inlined);
	symi_strmap_free(&s->pretty);
	symi_strmap_free(&s->qualified);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (r = s->retired; r; r = next) {
		next = r->next;
		dwfl_end(r->dwfl);
		free(r);
	}
	symi_arena_free(&s->arena);
	free(s->mods);
	free(s->desc);
	free(s->own_code);
	free(s->code);
	free(s->path);
	free(s);
}
