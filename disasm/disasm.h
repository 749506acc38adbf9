/*
 * disasm: x86-64 instruction knowledge for cctrace, built on capstone.
 *
 * The tracer plants int3 over the first byte of an instruction.  To resume a
 * thread that stopped there without a second trap, the original instruction
 * is either executed out of line, from a scratch slot in the target followed
 * by a jump back, or emulated (relative branches, calls and returns, whose
 * meaning depends on where they sit).  This module decides which, builds the
 * slot bytes and performs the emulation on a register file it is handed.  It
 * never touches a process: memory writes go through a callback.
 *
 * It also answers "which instruction ended just before this pc, and did it
 * read or write this address", which the watchpoint code needs because x86
 * data breakpoints trap after the access.
 */
#ifndef CCTRACE_DISASM_H
#define CCTRACE_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define DIS_MAX_INSN  15 /* longest legal x86 instruction */
#define DIS_SLOT_SIZE 32 /* bytes a displaced slot may use */

enum dis_kind {
	DIS_OTHER,    /* anything that can run out of line unchanged */
	DIS_JUMP,     /* jmp rel8/rel32 */
	DIS_JCC,      /* conditional jump, jrcxz, loop* (relative) */
	DIS_CALL,     /* call rel32 */
	DIS_RET,      /* ret, ret imm16 */
	DIS_INDIRECT, /* jmp/call through register or memory */
	DIS_SYSCALL,  /* syscall */
	DIS_INVALID,  /* undecodable bytes */
};

/* Memory access flags of an instruction. */
#define DIS_READ  1u
#define DIS_WRITE 2u

struct dis_insn {
	uint64_t addr; /* where it was decoded */
	unsigned len;  /* bytes */
	enum dis_kind kind;
	bool rip_relative;    /* has a [rip+disp32] memory operand */
	unsigned disp_offset; /* byte offset of disp32 within the insn, if rip_relative */
	uint64_t target;      /* absolute target of a relative jump/call/jcc */
	unsigned mem_access;  /* DIS_READ | DIS_WRITE of its explicit memory operand */
	char text[64];	      /* "mov eax, dword ptr [rip + 0x2f0e]" for reports */
};

/* Decode one instruction at code[0..n) that lives at address addr.  Returns 0,
 * or -1 for bytes capstone cannot decode (out->kind is then DIS_INVALID). */
int dis_decode(const uint8_t *code, size_t n, uint64_t addr, struct dis_insn *out);

/*
 * Build the out-of-line copy of insn (whose original bytes are code) for a
 * slot at slot_addr: the instruction, with its rip-relative displacement
 * rebased, followed by a jmp rel32 back to insn->addr + insn->len.  Relative
 * jcc is rewritten to its rel32 form aimed at the original target.
 * Returns the number of bytes written to out (<= DIS_SLOT_SIZE), or -1 when
 * the instruction must be emulated instead (DIS_JUMP, DIS_CALL, DIS_RET), or
 * when a displacement does not reach from slot_addr (more than +-2 GiB).
 */
int dis_build_slot(const struct dis_insn *insn, const uint8_t *code, uint64_t slot_addr,
		   uint8_t out[DIS_SLOT_SIZE]);

/* Does insn need emulation rather than a slot? */
bool dis_needs_emulation(const struct dis_insn *insn);

/* Writes 8 bytes of target memory; returns 0 or -1. */
typedef int (*dis_poke_fn)(void *ctx, uint64_t addr, uint64_t value);
/* Reads 8 bytes of target memory; returns 0 or -1. */
typedef int (*dis_peek_fn)(void *ctx, uint64_t addr, uint64_t *value);

/* Emulate a DIS_JUMP, DIS_CALL or DIS_RET on regs as if it had executed at
 * insn->addr.  Returns 0, or -1 if the kind cannot be emulated or memory
 * access failed (regs is then unchanged). */
int dis_emulate(const struct dis_insn *insn, struct user_regs_struct *regs, dis_peek_fn peek,
		dis_poke_fn poke, void *ctx);

/* Effective address of insn's explicit memory operand under regs (the
 * registers as they are before it executes).  fs_base/gs_base come from regs.
 * Returns 0 and sets *ea, or -1 if it has no memory operand. */
int dis_effective_address(const struct dis_insn *insn, const uint8_t *code,
			  const struct user_regs_struct *regs, uint64_t *ea);

/*
 * A data watchpoint fired with the thread at pc.  window holds the bytes
 * [pc - window_len, pc).  Find the instruction that ends exactly at pc and
 * has a memory operand; report its access flags (DIS_READ/DIS_WRITE) in
 * *access and its decoded form in *out.  Candidates are tried from the
 * longest; one whose operand, computed from regs, equals watch_addr wins.
 * Returns 0, or -1 if no candidate decodes to an instruction ending at pc.
 */
int dis_access_before(const uint8_t *window, size_t window_len, uint64_t pc,
		      const struct user_regs_struct *regs, uint64_t watch_addr,
		      struct dis_insn *out, unsigned *access);

#endif
