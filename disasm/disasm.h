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
 *
 * For fine-grained events it classifies instructions (memory access, stack,
 * locked, string, call), lists every memory access one makes under a given
 * register file, scans straight-line code for the next instruction that may
 * interest a stepper, and tells where a branch goes next, so that the tracer
 * can run to that instruction with one breakpoint instead of single-stepping.
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
	DIS_SYSCALL,  /* syscall, sysenter, int 0x80 */
	DIS_INVALID,  /* undecodable bytes */
	/* hlt, ud2/ud0/ud1, int3, int1, int n (n != 0x80), iret, far ret, sysret,
	 * sysexit: where control goes next is up to the kernel or a fault, so a
	 * stepper single-steps it.  A slot copies it unchanged, as DIS_OTHER. */
	DIS_TRAP,
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
	unsigned flags;	      /* DIS_F_* */
	unsigned access_size; /* bytes of the explicit memory operand (of each element of a
				 string op), 0 if it has none that it accesses */
	char text[64];	      /* "mov eax, dword ptr [rip + 0x2f0e]" for reports */
};

/* Instruction classification (struct dis_insn.flags), from the bytes alone. */
#define DIS_F_LOCKED 1u /* lock prefix, or xchg with a memory operand (implicitly locked) */
#define DIS_F_STACK                                                                                \
	2u		/* it accesses memory, and every access is through rsp or rbp:             \
			   push/pop/call/ret/leave, [rsp+x], [rbp-x] (not with fs:/gs:) */
#define DIS_F_STRING 4u /* movs/stos/lods/cmps/scas, rep or not */
#define DIS_F_MEM                                                                                  \
	8u	       /* reads or writes memory at all, explicitly or implicitly                  \
			  (push/pop/call/ret/leave/enter/pushf/popf/string ops/xlat) */
#define DIS_F_CALL 16u /* a call of any form: DIS_CALL, or a DIS_INDIRECT call */
#define DIS_F_FAR  32u /* a far jmp or call (ljmp, lcall): another code segment */

/* Decode one instruction at code[0..n) that lives at address addr.  Returns 0,
 * or -1 for bytes capstone cannot decode (out->kind is then DIS_INVALID). */
int dis_decode(const uint8_t *code, size_t n, uint64_t addr, struct dis_insn *out);

/*
 * Build the out-of-line copy of insn (whose original bytes are code) for a
 * slot at slot_addr: the instruction, with its rip-relative displacement
 * rebased, followed by a jmp rel32 back to insn->addr + insn->len.  Relative
 * jcc is rewritten to its rel32 form aimed at the original target.
 * Returns the number of bytes written to out (<= DIS_SLOT_SIZE), or -1 when
 * the instruction must be emulated instead (dis_needs_emulation), or
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

/* Emulate a DIS_JUMP, DIS_CALL, DIS_RET, or an indirect call (its target
 * read from code, its bytes, under regs), on regs as if it had executed at
 * insn->addr.  code may be NULL for the other kinds.  Returns 0, or -1 if
 * the kind cannot be emulated or memory access failed (regs is then
 * unchanged). */
int dis_emulate(const struct dis_insn *insn, const uint8_t *code, struct user_regs_struct *regs,
		dis_peek_fn peek, dis_poke_fn poke, void *ctx);

/* Effective address of insn's explicit memory operand under regs (the
 * registers as they are before it executes).  fs_base/gs_base come from regs.
 * Returns 0 and sets *ea, or -1 if it has no memory operand. */
int dis_effective_address(const struct dis_insn *insn, const uint8_t *code,
			  const struct user_regs_struct *regs, uint64_t *ea);

/*
 * A data watchpoint on [watch_addr, +watch_len) fired with the thread at
 * pc.  window holds the bytes [pc - window_len, pc).  Find the instruction
 * that ends exactly at pc and touches memory; report its access flags
 * (DIS_READ/DIS_WRITE) in *access and its decoded form in *out.  Returns
 * how well it explains the access (DIS_MATCH_*), or -1 if no candidate
 * decodes to an instruction ending at pc.
 */
enum {
	DIS_MATCH_OTHER,  /* it touches memory, not known to be the watched bytes */
	DIS_MATCH_COVERS, /* an access overlaps the watched bytes */
	DIS_MATCH_EXACT,  /* an access starts at watch_addr */
};
int dis_access_before(const uint8_t *window, size_t window_len, uint64_t pc,
		      const struct user_regs_struct *regs, uint64_t watch_addr, unsigned watch_len,
		      struct dis_insn *out, unsigned *access);

/* The same for a rep string op at pc, code[0..n) its bytes, that the
 * watchpoint stopped in the middle of its run: the element its last
 * iteration touched overlaps the watched bytes.  DIS_MATCH_COVERS or
 * DIS_MATCH_EXACT, or -1 if pc holds no such instruction. */
int dis_string_in_progress(const uint8_t *code, size_t n, uint64_t pc,
			   const struct user_regs_struct *regs, uint64_t watch_addr,
			   unsigned watch_len, struct dis_insn *out, unsigned *access);

/* --- memory accesses --- */

#define DIS_MAX_ACCESSES 4 /* no instruction makes more (movs, push [m] and call [m] make 2) */

struct dis_access {
	uint64_t addr;	 /* effective address for the first (or only) execution */
	unsigned size;	 /* bytes (of one element, for a string op) */
	unsigned rw;	 /* DIS_READ | DIS_WRITE (add [rax],1, cmpxchg and xchg are both) */
	bool stack;	 /* through rsp/rbp, or an implicit stack access */
	uint64_t count;	 /* elements a string op touches: rcx under rep, else 1 */
	bool descending; /* string op with eflags.DF set: later elements lie below addr */
};

/*
 * Every memory access insn (decoded from code) makes when executed with regs,
 * the registers before it runs, in the order it makes them:
 *  - the explicit operand: segment base (fs:/gs: from regs->fs_base/gs_base)
 *    + base + index * scale + disp, rip-relative counted from the NEXT
 *    instruction, cut to 32 bits under an address-size prefix;
 *  - implicit ones: push/call/pushf/enter write [rsp - size], pop/ret/popf
 *    read [rsp], leave reads [rbp]; pop [rsp+x] addresses its operand with
 *    rsp already incremented, as the CPU does; movs reads [rsi] (fs:/gs:
 *    override honoured) and writes [rdi]; stos writes [rdi]; lods reads
 *    [rsi]; cmps reads [rsi] then [rdi]; scas reads [rdi]; xlat reads
 *    [rbx + al].  A rep/repe/repne string op with rcx == 0 makes none.
 * lea, nop, prefetch and clflush with memory operands make no access.
 * Not covered: far call/ret/iret stack frames, enter's nesting levels,
 * maskmov*'s implicit [rdi], gathers/scatters (VSIB: returns -1).
 * Returns the number stored (<= max; extra accesses are dropped), 0 if none,
 * -1 if code does not decode or an address cannot be computed.
 */
int dis_accesses(const struct dis_insn *insn, const uint8_t *code,
		 const struct user_regs_struct *regs, struct dis_access *out, int max);

/* A decoding kept whole (capstone's detail with it), for an instruction
 * asked about again and again at one address: dis_kept_accesses answers as
 * dis_accesses would, without decoding.  Shared by reference count (a
 * breakpoint copied into a forked process shares its instruction's): the
 * last dis_kept_drop frees it.  dis_keep gives NULL for bytes that do not
 * decode, or out of memory; the caller then decodes as before. */
struct dis_kept;
struct dis_kept *dis_keep(const struct dis_insn *insn, const uint8_t *code);
struct dis_kept *dis_kept_share(struct dis_kept *k); /* k, one more holder (NULL: NULL) */
void dis_kept_drop(struct dis_kept *k);		     /* NULL: nothing */
int dis_kept_accesses(const struct dis_kept *k, const struct user_regs_struct *regs,
		      struct dis_access *out, int max);

/* Does access a, all a->count elements of it (below addr when descending),
 * touch any of the len bytes at lo?  For matching read(EXPR)/write(EXPR)
 * by decoding, when there are more lvalues than debug registers. */
bool dis_access_overlaps(const struct dis_access *a, uint64_t lo, uint64_t len);

/* --- decode-ahead stepping --- */

/* What a stepper is looking for.  DIS_WANT_MEM matches an access that is not
 * a stack access, DIS_WANT_STACK_MEM one that is (set both for every access,
 * as --include-stack does).  DIS_WANT_READ / DIS_WANT_WRITE, if either is
 * given, narrow those memory matches to accesses that read / write. */
#define DIS_WANT_MEM	   1u
#define DIS_WANT_STACK_MEM 2u
#define DIS_WANT_CALL	   4u
#define DIS_WANT_RET	   8u
#define DIS_WANT_SYSCALL   16u
#define DIS_WANT_READ	   32u
#define DIS_WANT_WRITE	   64u

/*
 * Scan forward from code[0] (at address addr, n bytes available) through
 * straight-line code, and stop at the first instruction that either may
 * match want (from its classification alone: no registers, so a rep string
 * op counts as accessing memory) or is not DIS_OTHER, i.e. may transfer
 * control: jmp/jcc/call/ret/indirect (DIS_JUMP..DIS_INDIRECT), DIS_SYSCALL,
 * DIS_TRAP, or bytes that do not decode.  The first instruction, code[0],
 * is examined too: a stepper standing on a match gets offset 0.
 * Returns the byte offset k of that instruction, which *stop holds decoded.
 * If decoding fails at offset k, *stop has kind DIS_INVALID, addr addr + k
 * and len 0: when n - k < DIS_MAX_INSN this may only mean the buffer ended
 * inside an instruction, so read at least DIS_MAX_INSN bytes at addr + k and
 * scan again from there; with DIS_MAX_INSN or more bytes left the bytes are
 * truly undecodable (single-step them and let the CPU decide).  Returns -1
 * when that happens at k == 0 (nothing decodable at code[0]).
 * code must hold the original bytes: an int3 the tracer planted in the copy
 * reads as DIS_TRAP.  Each thread remembers its 64 most recent scans (keyed
 * by addr and want, checked against the bytes), so rescanning a loop costs
 * a memcmp, not a decode per instruction.
 */
long dis_scan(const uint8_t *code, size_t n, uint64_t addr, unsigned want, struct dis_insn *stop);

/*
 * True if insn (decoded from code), executed with regs, satisfies want:
 * DIS_WANT_CALL and it is a call (DIS_F_CALL), DIS_WANT_RET and DIS_RET,
 * DIS_WANT_SYSCALL and DIS_SYSCALL, or one of its dis_accesses() matches the
 * memory wants (an operand whose base is rsp/rbp counts as stack).  If its
 * accesses cannot be computed it matches any memory want its flags allow,
 * so that a stepper stops rather than misses an event.
 */
bool dis_matches(const struct dis_insn *insn, const uint8_t *code,
		 const struct user_regs_struct *regs, unsigned want);

/*
 * Where insn, at insn->addr and executed with regs, sends control next:
 * jmp/call rel: the target; jcc, jrcxz, loop*: the target or the next
 * instruction, from regs->eflags and rcx; indirect jmp/call through a
 * register: its value, through memory: the 8 bytes there, read with peek;
 * ret: [rsp], read with peek; DIS_OTHER and DIS_SYSCALL: the next
 * instruction (a system call such as exit or rt_sigreturn may not come
 * back there).  A rep string op goes to the next instruction once it is
 * done; note that PTRACE_SINGLESTEP traps after each of its iterations with
 * rip unchanged (rcx one less), so a single-stepping fallback sees it once
 * per element where a breakpoint sees it once.  Returns 0 and sets *next,
 * or -1 for DIS_TRAP, DIS_INVALID, far jumps and calls, xbegin, and memory
 * peek cannot read.
 */
int dis_next_pc(const struct dis_insn *insn, const uint8_t *code,
		const struct user_regs_struct *regs, dis_peek_fn peek, void *ctx, uint64_t *next);

#endif
