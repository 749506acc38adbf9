/*
 * capstone: the per-thread capstone handle.
 *
 * A csh is not safe to share between threads, and opening one costs far more
 * than decoding an instruction.  So each thread lazily opens its own handle
 * (x86-64, detail on) together with one cs_insn buffer that cs_disasm_iter
 * refills, and a pthread key closes both when the thread exits.  The main
 * thread's pair is simply left to process exit.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "disasm/internal.h"

struct dis_cs {
	csh handle;
	cs_insn *insn;
};

static __thread struct dis_cs *tls_cs;
static pthread_key_t cs_key;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_release(void *p)
{
	struct dis_cs *cs = p;

	cs_free(cs->insn, 1);
	cs_close(&cs->handle);
	free(cs);
}

static void cs_make_key(void)
{
	pthread_key_create(&cs_key, cs_release);
}

static struct dis_cs *cs_open_thread(void)
{
	struct dis_cs *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs->handle) != CS_ERR_OK)
		goto err_free;
	if (cs_option(cs->handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		goto err_close;
	cs->insn = cs_malloc(cs->handle);
	if (!cs->insn)
		goto err_close;
	pthread_once(&cs_once, cs_make_key);
	pthread_setspecific(cs_key, cs);
	return cs;

err_close:
	cs_close(&cs->handle);
err_free:
	free(cs);
	return NULL;
}

const cs_insn *dis_cs_decode(const uint8_t *code, size_t n, uint64_t addr)
{
	const uint8_t *p = code;
	uint64_t a = addr;

	if (!tls_cs)
		tls_cs = cs_open_thread();
	if (!tls_cs)
		return NULL;
	if (!cs_disasm_iter(tls_cs->handle, &p, &n, &a, tls_cs->insn))
		return NULL;
	return tls_cs->insn;
}
