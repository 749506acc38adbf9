/*
 * internal: what the disasm/ files share and nobody else sees.
 *
 * Every file decodes through dis_cs_decode(), which owns one capstone handle
 * and one cs_insn buffer per thread, so the module is thread-safe without
 * locks and decodes without allocating.  The returned cs_insn stays valid
 * until the same thread decodes again.
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

#endif
