/*
 * internal: what the disasm/ files share and nobody else sees.
 *
 * Every file decodes through dis_cs_decode(), which owns one capstone handle
 * and a small cache of cs_insn buffers per thread, so the module is
 * thread-safe without locks and decodes without allocating.  The returned
 * cs_insn stays valid until the same thread decodes again; one asked about
 * at every stop is copied out of the cache instead (access.c's dis_keep).
 */
#ifndef CCTRACE_DISASM_INTERNAL_H
#define CCTRACE_DISASM_INTERNAL_H

#include <capstone/capstone.h>

#include "disasm/disasm.h"

/* Decode exactly one instruction at code[0..n), located at addr.  Returns the
 * thread's cs_insn (with detail), or NULL if the bytes do not decode. */
const cs_insn *dis_cs_decode(const uint8_t *code, size_t n, uint64_t addr);

/* DIS_READ|DIS_WRITE for operand i (a memory operand) of insn, with capstone
 * 4's wrong access flags corrected. */
unsigned dis_cs_op_access(const cs_insn *insn, int i);

/* Effective address of memory operand op of insn under regs.  Returns 0, or
 * -1 for a register capstone names that regs does not hold (VSIB index). */
int dis_cs_op_address(const cs_insn *insn, const cs_x86_op *op, const struct user_regs_struct *regs,
		      uint64_t *ea);

/* Value of a general register (or of its 32-bit half) in regs; X86_REG_INVALID
 * is 0.  Returns 0, or -1 for a register regs does not hold. */
int dis_reg_value(const struct user_regs_struct *regs, x86_reg reg, uint64_t *v);

/* Fills everything of out but text from ci (dis_decode without the printing,
 * which a scan through many instructions does not need). */
void dis_cs_fill(const cs_insn *ci, struct dis_insn *out);

/* Writes "mnemonic op_str" of ci into out->text. */
void dis_cs_set_text(const cs_insn *ci, struct dis_insn *out);

/* The accesses of ci, as dis_accesses() describes them.  With regs NULL
 * only the classification is filled in (addr 0, count 1) and a rep string
 * op is assumed to run at least once. */
int dis_cs_accesses(const cs_insn *ci, const struct user_regs_struct *regs, struct dis_access *out,
		    int max);

/* Is ci one of movs/cmps/stos/lods/scas? */
bool dis_cs_is_string(const cs_insn *ci);

#endif
