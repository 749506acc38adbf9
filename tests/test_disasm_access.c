/*
 * test_disasm_access: classification, memory accesses, decode-ahead scan and
 * next-pc computation of the disasm module, on hand-assembled instructions.
 *
 * As in test_disasm.c, every byte string was encoded by hand from the Intel
 * SDM opcode tables (ModRM = mod reg r/m, SIB = scale index base, noted per
 * row), and every expected address is computed by hand from the register
 * file below, so the tests do not echo capstone back at itself.  The table
 * drives dis_decode (kind, flags, access size) and dis_accesses (address,
 * size, direction, stack-ness, count of each access, in execution order).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "disasm/disasm.h"

#define ADDR 0x401000ull
#define RAX  0x10000ull
#define RBX  0x20ull
#define RCX  0x3ull
#define RDX  0x100ull
#define RDI  0x7000ull
#define RSI  0x8000ull
#define RBP  0x7ffe0100ull
#define RSP  0x7ffe0000ull
#define FS   0x7f0000001000ull
#define GS   0x7f0000900000ull
#define R    DIS_READ
#define W    DIS_WRITE
#define RW   (DIS_READ | DIS_WRITE)
#define MEM  DIS_F_MEM
#define STK  DIS_F_STACK
#define LOCK DIS_F_LOCKED
#define STR  DIS_F_STRING
#define CALL DIS_F_CALL
#define F_ZF 0x40ull
#define F_DF 0x400ull

static struct user_regs_struct test_regs(void)
{
	struct user_regs_struct r;

	memset(&r, 0, sizeof(r));
	r.rax = RAX;
	r.rbx = RBX;
	r.rcx = RCX;
	r.rdx = RDX;
	r.rdi = RDI;
	r.rsi = RSI;
	r.rbp = RBP;
	r.rsp = RSP;
	r.fs_base = FS;
	r.gs_base = GS;
	r.rip = ADDR;
	return r;
}

struct arow {
	const char *name;
	uint8_t bytes[DIS_MAX_INSN];
	unsigned len;
	enum dis_kind kind;
	unsigned flags;
	unsigned access_size;
	int n;
	struct dis_access acc[2];
};

/* One access of a non-string instruction, and one of a string op. */
#define A(a, s, m, st)                                                                             \
	{                                                                                          \
		.addr = (a), .size = (s), .rw = (m), .stack = (st), .count = 1                     \
	}
#define AS(a, s, m, c)                                                                             \
	{                                                                                          \
		.addr = (a), .size = (s), .rw = (m), .stack = false, .count = (c)                  \
	}

static const struct arow arows[] = {
    /* 8B /r, ModRM 00 000 101 = [rip+disp32]: next insn at ADDR+6 */
    {"mov eax, [rip+0x10]",
     {0x8b, 0x05, 0x10, 0, 0, 0},
     6,
     DIS_OTHER,
     MEM,
     4,
     1,
     {A(ADDR + 6 + 0x10, 4, R, false)}},
    /* REX.W 89 /r, ModRM 00 000 101 */
    {"mov [rip+0x10], rax",
     {0x48, 0x89, 0x05, 0x10, 0, 0, 0},
     7,
     DIS_OTHER,
     MEM,
     8,
     1,
     {A(ADDR + 7 + 0x10, 8, W, false)}},
    /* 89 /r, ModRM 01 001 100 (ecx, SIB + disp8), SIB 10 011 000 (rbx*4 + rax) */
    {"mov [rax+rbx*4+8], ecx",
     {0x89, 0x4c, 0x98, 0x08},
     4,
     DIS_OTHER,
     MEM,
     4,
     1,
     {A(RAX + RBX * 4 + 8, 4, W, false)}},
    /* 64 REX.W 8B /r, ModRM 00 000 100, SIB 00 100 101 = disp32 without base */
    {"mov rax, fs:[0x28]",
     {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0},
     9,
     DIS_OTHER,
     MEM,
     8,
     1,
     {A(FS + 0x28, 8, R, false)}},
    /* 64 8B /r, ModRM 00 000 000 */
    {"mov eax, fs:[rax]", {0x64, 0x8b, 0x00}, 3, DIS_OTHER, MEM, 4, 1, {A(FS + RAX, 4, R, false)}},
    /* 65 REX.W 8B /r as above */
    {"mov rax, gs:[0x10]",
     {0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0},
     9,
     DIS_OTHER,
     MEM,
     8,
     1,
     {A(GS + 0x10, 8, R, false)}},
    /* 64 REX.W 8B /r, ModRM 01 000 101 = [rbp+disp8]: thread-local, not stack */
    {"mov rax, fs:[rbp+8]",
     {0x64, 0x48, 0x8b, 0x45, 0x08},
     5,
     DIS_OTHER,
     MEM,
     8,
     1,
     {A(FS + RBP + 8, 8, R, false)}},
    /* 50+rd */
    {"push rbp", {0x55}, 1, DIS_OTHER, MEM | STK, 0, 1, {A(RSP - 8, 8, W, true)}},
    /* 66 50+rw: 16-bit push */
    {"push ax", {0x66, 0x50}, 2, DIS_OTHER, MEM | STK, 0, 1, {A(RSP - 2, 2, W, true)}},
    /* 58+rd */
    {"pop rbx", {0x5b}, 1, DIS_OTHER, MEM | STK, 0, 1, {A(RSP, 8, R, true)}},
    /* FF /6, ModRM 00 110 000: reads [rax], then pushes it */
    {"push qword [rax]",
     {0xff, 0x30},
     2,
     DIS_OTHER,
     MEM,
     8,
     2,
     {A(RAX, 8, R, false), A(RSP - 8, 8, W, true)}},
    /* 8F /0, ModRM 00 000 000: pops, then stores to [rax] */
    {"pop qword [rax]",
     {0x8f, 0x00},
     2,
     DIS_OTHER,
     MEM,
     8,
     2,
     {A(RSP, 8, R, true), A(RAX, 8, W, false)}},
    /* 8F /0, ModRM 01 000 100, SIB 00 100 100 (base rsp), disp8: the SDM says the
     * operand address uses rsp after the increment */
    {"pop qword [rsp+8]",
     {0x8f, 0x44, 0x24, 0x08},
     4,
     DIS_OTHER,
     MEM | STK,
     8,
     2,
     {A(RSP, 8, R, true), A(RSP + 8 + 8, 8, W, true)}},
    /* 9C */
    {"pushfq", {0x9c}, 1, DIS_OTHER, MEM | STK, 0, 1, {A(RSP - 8, 8, W, true)}},
    /* C9: mov rsp, rbp; pop rbp */
    {"leave", {0xc9}, 1, DIS_OTHER, MEM | STK, 0, 1, {A(RBP, 8, R, true)}},
    /* C8 iw ib: pushes rbp first */
    {"enter 8, 0",
     {0xc8, 0x08, 0x00, 0x00},
     4,
     DIS_OTHER,
     MEM | STK,
     0,
     1,
     {A(RSP - 8, 8, W, true)}},
    /* E8 cd */
    {"call rel32",
     {0xe8, 0x10, 0, 0, 0},
     5,
     DIS_CALL,
     MEM | STK | CALL,
     0,
     1,
     {A(RSP - 8, 8, W, true)}},
    /* FF /2, ModRM 00 010 101 = [rip+disp32]: loads the target, then pushes */
    {"call [rip+0x200]",
     {0xff, 0x15, 0x00, 0x02, 0, 0},
     6,
     DIS_INDIRECT,
     MEM | CALL,
     8,
     2,
     {A(ADDR + 6 + 0x200, 8, R, false), A(RSP - 8, 8, W, true)}},
    /* FF /2, ModRM 11 010 000 */
    {"call rax", {0xff, 0xd0}, 2, DIS_INDIRECT, MEM | STK | CALL, 0, 1, {A(RSP - 8, 8, W, true)}},
    /* C3 */
    {"ret", {0xc3}, 1, DIS_RET, MEM | STK, 0, 1, {A(RSP, 8, R, true)}},
    /* C2 iw */
    {"ret 8", {0xc2, 0x08, 0x00}, 3, DIS_RET, MEM | STK, 0, 1, {A(RSP, 8, R, true)}},
    /* FF /4, ModRM 00 100 000 */
    {"jmp [rax]", {0xff, 0x20}, 2, DIS_INDIRECT, MEM, 8, 1, {A(RAX, 8, R, false)}},
    /* F3 A4: rcx = 3 elements of 1 byte */
    {"rep movsb",
     {0xf3, 0xa4},
     2,
     DIS_OTHER,
     MEM | STR,
     1,
     2,
     {AS(RSI, 1, R, RCX), AS(RDI, 1, W, RCX)}},
    /* F3 REX.W A5 */
    {"rep movsq",
     {0xf3, 0x48, 0xa5},
     3,
     DIS_OTHER,
     MEM | STR,
     8,
     2,
     {AS(RSI, 8, R, RCX), AS(RDI, 8, W, RCX)}},
    /* REX.W A5 without rep: one element */
    {"movsq", {0x48, 0xa5}, 2, DIS_OTHER, MEM | STR, 8, 2, {AS(RSI, 8, R, 1), AS(RDI, 8, W, 1)}},
    /* 66 A5: word elements */
    {"movsw", {0x66, 0xa5}, 2, DIS_OTHER, MEM | STR, 2, 2, {AS(RSI, 2, R, 1), AS(RDI, 2, W, 1)}},
    /* 64 A4: the override applies to the source only */
    {"movsb fs:[rsi]",
     {0x64, 0xa4},
     2,
     DIS_OTHER,
     MEM | STR,
     1,
     2,
     {AS(FS + RSI, 1, R, 1), AS(RDI, 1, W, 1)}},
    /* F3 AB */
    {"rep stosd", {0xf3, 0xab}, 2, DIS_OTHER, MEM | STR, 4, 1, {AS(RDI, 4, W, RCX)}},
    /* AC */
    {"lodsb", {0xac}, 1, DIS_OTHER, MEM | STR, 1, 1, {AS(RSI, 1, R, 1)}},
    /* F2 AE */
    {"repne scasb", {0xf2, 0xae}, 2, DIS_OTHER, MEM | STR, 1, 1, {AS(RDI, 1, R, RCX)}},
    /* A6: [rsi] then [rdi] */
    {"cmpsb", {0xa6}, 1, DIS_OTHER, MEM | STR, 1, 2, {AS(RSI, 1, R, 1), AS(RDI, 1, R, 1)}},
    /* D7: al = [rbx + al], al = 0 here */
    {"xlatb", {0xd7}, 1, DIS_OTHER, MEM, 0, 1, {A(RBX + (RAX & 0xff), 1, R, false)}},
    /* F0 0F B1 /r, ModRM 00 110 111 */
    {"lock cmpxchg [rdi], esi",
     {0xf0, 0x0f, 0xb1, 0x37},
     4,
     DIS_OTHER,
     MEM | LOCK,
     4,
     1,
     {A(RDI, 4, RW, false)}},
    /* 87 /r, ModRM 00 001 000: locked without a prefix */
    {"xchg [rax], ecx", {0x87, 0x08}, 2, DIS_OTHER, MEM | LOCK, 4, 1, {A(RAX, 4, RW, false)}},
    /* F0 0F C1 /r, ModRM 00 000 111 */
    {"lock xadd [rdi], eax",
     {0xf0, 0x0f, 0xc1, 0x07},
     4,
     DIS_OTHER,
     MEM | LOCK,
     4,
     1,
     {A(RDI, 4, RW, false)}},
    /* F0 FF /0, ModRM 00 000 000 */
    {"lock inc dword [rax]",
     {0xf0, 0xff, 0x00},
     3,
     DIS_OTHER,
     MEM | LOCK,
     4,
     1,
     {A(RAX, 4, RW, false)}},
    /* F0 REX.W 0F C7 /1, ModRM 00 001 111 */
    {"lock cmpxchg16b [rdi]",
     {0xf0, 0x48, 0x0f, 0xc7, 0x0f},
     5,
     DIS_OTHER,
     MEM | LOCK,
     16,
     1,
     {A(RDI, 16, RW, false)}},
    /* 83 /0 ib: read-modify-write, not locked */
    {"add dword [rax], 1", {0x83, 0x00, 0x01}, 3, DIS_OTHER, MEM, 4, 1, {A(RAX, 4, RW, false)}},
    /* REX.W 8D /r, ModRM 00 000 101: an address, never an access */
    {"lea rax, [rip+0x100]", {0x48, 0x8d, 0x05, 0x00, 0x01, 0, 0}, 7, DIS_OTHER, 0, 0, 0, {}},
    /* 0F 1F /0, ModRM 01 000 100, SIB 00 000 000, disp8 */
    {"nop dword [rax+rax]", {0x0f, 0x1f, 0x44, 0x00, 0x00}, 5, DIS_OTHER, 0, 0, 0, {}},
    /* 0F 18 /1, ModRM 00 001 000: a hint, no architectural access */
    {"prefetcht0 [rax]", {0x0f, 0x18, 0x08}, 3, DIS_OTHER, 0, 0, 0, {}},
    /* REX.W 89 /r, ModRM 01 000 101 = [rbp+disp8] */
    {"mov [rbp-8], rax",
     {0x48, 0x89, 0x45, 0xf8},
     4,
     DIS_OTHER,
     MEM | STK,
     8,
     1,
     {A(RBP - 8, 8, W, true)}},
    /* REX.W 8B /r, ModRM 01 000 100, SIB 00 100 100 (base rsp), disp8 */
    {"mov rax, [rsp+0x10]",
     {0x48, 0x8b, 0x44, 0x24, 0x10},
     5,
     DIS_OTHER,
     MEM | STK,
     8,
     1,
     {A(RSP + 0x10, 8, R, true)}},
    /* REX.W 8B /r, ModRM 01 000 100, SIB 11 000 101 (rax*8 + rbp), disp8 0: base rbp */
    {"mov rax, [rbp+rax*8]",
     {0x48, 0x8b, 0x44, 0xc5, 0x00},
     5,
     DIS_OTHER,
     MEM | STK,
     8,
     1,
     {A(RBP + RAX * 8, 8, R, true)}},
    /* 0F B6 /r, ModRM 00 000 000 */
    {"movzx eax, byte [rax]", {0x0f, 0xb6, 0x00}, 3, DIS_OTHER, MEM, 1, 1, {A(RAX, 1, R, false)}},
    /* 80 /7 ib, ModRM 00 111 101: the imm8 follows the disp32, next insn at ADDR+7 */
    {"cmp byte [rip+0x10], 0",
     {0x80, 0x3d, 0x10, 0, 0, 0, 0x00},
     7,
     DIS_OTHER,
     MEM,
     1,
     1,
     {A(ADDR + 7 + 0x10, 1, R, false)}},
    /* 85 /r, ModRM 00 000 000 */
    {"test [rax], eax", {0x85, 0x00}, 2, DIS_OTHER, MEM, 4, 1, {A(RAX, 4, R, false)}},
    /* F3 0F 6F /r, ModRM 00 000 110 */
    {"movdqu xmm0, [rsi]",
     {0xf3, 0x0f, 0x6f, 0x06},
     4,
     DIS_OTHER,
     MEM,
     16,
     1,
     {A(RSI, 16, R, false)}},
    /* 0F 11 /r, ModRM 00 000 111 */
    {"movups [rdi], xmm0", {0x0f, 0x11, 0x07}, 3, DIS_OTHER, MEM, 16, 1, {A(RDI, 16, W, false)}},
    /* F2 0F 10 /r: SSE movsd shares capstone's id with the string op */
    {"movsd xmm0, [rsi]", {0xf2, 0x0f, 0x10, 0x06}, 4, DIS_OTHER, MEM, 8, 1, {A(RSI, 8, R, false)}},
    /* 67 8B /r: 32-bit address size */
    {"mov eax, [eax]", {0x67, 0x8b, 0x00}, 3, DIS_OTHER, MEM, 4, 1, {A(RAX, 4, R, false)}},
    /* EVEX 62, P0 E1 (R X B clear, R' clear: reg + 16; map 0F), P1 F5 (W1, vvvv = ~1110,
     * pp = 66), P2 20 (L'L = 01: 256 bits; V' clear: vvvv + 16), EF /r, ModRM 01 001 100,
     * SIB 00 010 111 (rdx + rdi), disp8 FE scaled by N = 32: -0x40 */
    {"vpxorq ymm17, ymm17, [rdi+rdx-0x40]",
     {0x62, 0xe1, 0xf5, 0x20, 0xef, 0x4c, 0x17, 0xfe},
     8,
     DIS_OTHER,
     MEM,
     32,
     1,
     {A(RDI + RDX - 0x40, 32, R, false)}},
    /* as above, SIB 00 100 111: index 100 is "none" */
    {"vpxorq ymm17, ymm17, [rdi-0x40]",
     {0x62, 0xe1, 0xf5, 0x20, 0xef, 0x4c, 0x27, 0xfe},
     8,
     DIS_OTHER,
     MEM,
     32,
     1,
     {A(RDI - 0x40, 32, R, false)}},
    /* D1 /0, ModRM 00 000 000: a rotate of memory writes it back */
    {"rol dword [rax], 1", {0xd1, 0x00}, 2, DIS_OTHER, MEM, 4, 1, {A(RAX, 4, RW, false)}},
    /* 0F AE /3, ModRM 00 011 000 */
    {"stmxcsr [rax]", {0x0f, 0xae, 0x18}, 3, DIS_OTHER, MEM, 4, 1, {A(RAX, 4, W, false)}},
    {"syscall", {0x0f, 0x05}, 2, DIS_SYSCALL, 0, 0, 0, {}},
    {"int 0x80", {0xcd, 0x80}, 2, DIS_SYSCALL, 0, 0, 0, {}},
    {"sysenter", {0x0f, 0x34}, 2, DIS_SYSCALL, 0, 0, 0, {}},
    {"int3", {0xcc}, 1, DIS_TRAP, 0, 0, 0, {}},
    {"int 3", {0xcd, 0x03}, 2, DIS_TRAP, 0, 0, 0, {}},
    {"hlt", {0xf4}, 1, DIS_TRAP, 0, 0, 0, {}},
    {"ud2", {0x0f, 0x0b}, 2, DIS_TRAP, 0, 0, 0, {}},
    {"mov rbp, rsp", {0x48, 0x89, 0xe5}, 3, DIS_OTHER, 0, 0, 0, {}},
    /* 75 cb */
    {"jne rel8", {0x75, 0x10}, 2, DIS_JCC, 0, 0, 0, {}},
};

static void check_access(const char *name, int i, const struct dis_access *got,
			 const struct dis_access *want)
{
	cr_expect_eq(got->addr, want->addr, "%s #%d: addr %#lx, expected %#lx", name, i,
		     (unsigned long)got->addr, (unsigned long)want->addr);
	cr_expect_eq(got->size, want->size, "%s #%d: size %u", name, i, got->size);
	cr_expect_eq(got->rw, want->rw, "%s #%d: rw %u", name, i, got->rw);
	cr_expect_eq(got->stack, want->stack, "%s #%d: stack %d", name, i, got->stack);
	cr_expect_eq(got->count, want->count, "%s #%d: count %lu", name, i,
		     (unsigned long)got->count);
	cr_expect(!got->descending, "%s #%d: descending with DF clear", name, i);
}

Test(access, table)
{
	struct user_regs_struct regs = test_regs();

	for (size_t r = 0; r < sizeof(arows) / sizeof(arows[0]); r++) {
		const struct arow *t = &arows[r];
		struct dis_access acc[DIS_MAX_ACCESSES];
		struct dis_insn insn;
		int n;

		cr_assert_eq(dis_decode(t->bytes, t->len, ADDR, &insn), 0, "%s: decode", t->name);
		cr_expect_eq(insn.len, t->len, "%s: len %u", t->name, insn.len);
		cr_expect_eq(insn.kind, t->kind, "%s: kind %d", t->name, insn.kind);
		cr_expect_eq(insn.flags, t->flags, "%s: flags %#x, expected %#x", t->name,
			     insn.flags, t->flags);
		cr_expect_eq(insn.access_size, t->access_size, "%s: access_size %u", t->name,
			     insn.access_size);
		n = dis_accesses(&insn, t->bytes, &regs, acc, DIS_MAX_ACCESSES);
		cr_expect_eq(n, t->n, "%s: %d accesses, expected %d", t->name, n, t->n);
		for (int i = 0; i < n && i < t->n; i++)
			check_access(t->name, i, &acc[i], &t->acc[i]);
	}
}

static struct dis_insn decode_ok(const uint8_t *code, size_t n)
{
	struct dis_insn insn;

	cr_assert_eq(dis_decode(code, n, ADDR, &insn), 0);
	return insn;
}

Test(access, rep_with_zero_count_makes_none)
{
	const uint8_t movsb[] = {0xf3, 0xa4}, stosd[] = {0xf3, 0xab};
	const uint8_t stosd_a32[] = {0x67, 0xf3, 0xab}; /* ecx counts, not rcx */
	struct user_regs_struct regs = test_regs();
	struct dis_access acc[DIS_MAX_ACCESSES];
	struct dis_insn insn;

	regs.rcx = 0;
	insn = decode_ok(movsb, sizeof(movsb));
	cr_expect_eq(dis_accesses(&insn, movsb, &regs, acc, DIS_MAX_ACCESSES), 0);
	cr_expect(!dis_matches(&insn, movsb, &regs, DIS_WANT_MEM | DIS_WANT_STACK_MEM));
	insn = decode_ok(stosd, sizeof(stosd));
	cr_expect_eq(dis_accesses(&insn, stosd, &regs, acc, DIS_MAX_ACCESSES), 0);
	regs.rcx = 1ull << 32;
	insn = decode_ok(stosd_a32, sizeof(stosd_a32));
	cr_expect_eq(dis_accesses(&insn, stosd_a32, &regs, acc, DIS_MAX_ACCESSES), 0);
	insn = decode_ok(stosd, sizeof(stosd));
	cr_assert_eq(dis_accesses(&insn, stosd, &regs, acc, DIS_MAX_ACCESSES), 1);
	cr_expect_eq(acc[0].count, 1ull << 32);
}

Test(access, direction_flag_descends)
{
	const uint8_t movsq[] = {0xf3, 0x48, 0xa5};
	struct user_regs_struct regs = test_regs();
	struct dis_access acc[DIS_MAX_ACCESSES];
	struct dis_insn insn = decode_ok(movsq, sizeof(movsq));

	regs.eflags = F_DF;
	cr_assert_eq(dis_accesses(&insn, movsq, &regs, acc, DIS_MAX_ACCESSES), 2);
	cr_expect_eq(acc[0].addr, RSI);
	cr_expect(acc[0].descending);
	cr_expect(acc[1].descending);
}

Test(access, max_bounds_the_output)
{
	const uint8_t push_mem[] = {0xff, 0x30}; /* push qword [rax] */
	struct user_regs_struct regs = test_regs();
	struct dis_access acc[2] = {{.addr = 1}, {.addr = 2}};
	struct dis_insn insn = decode_ok(push_mem, sizeof(push_mem));

	cr_expect_eq(dis_accesses(&insn, push_mem, &regs, acc, 1), 1);
	cr_expect_eq(acc[0].addr, RAX);
	cr_expect_eq(acc[1].addr, 2, "wrote past max");
	cr_expect_eq(dis_accesses(&insn, push_mem, &regs, acc, 0), 0);
}

Test(access, address_size_truncates)
{
	const uint8_t load[] = {0x67, 0x8b, 0x00}; /* mov eax, [eax] */
	struct user_regs_struct regs = test_regs();
	struct dis_access acc[DIS_MAX_ACCESSES];
	struct dis_insn insn = decode_ok(load, sizeof(load));

	regs.rax = 0xffffffff00001234ull;
	cr_assert_eq(dis_accesses(&insn, load, &regs, acc, DIS_MAX_ACCESSES), 1);
	cr_expect_eq(acc[0].addr, 0x1234);
}

Test(access, errors)
{
	const uint8_t bad[] = {0x06};
	/* VEX.128.66.0F38.W0 90 /r vpgatherdd xmm0, [rax+xmm2*4], xmm1: C4 E2 71 90,
	 * ModRM 00 000 100, SIB 10 010 000.  A vector index has no single address. */
	const uint8_t gather[] = {0xc4, 0xe2, 0x71, 0x90, 0x04, 0x90};
	struct user_regs_struct regs = test_regs();
	struct dis_access acc[DIS_MAX_ACCESSES];
	struct dis_insn insn;

	cr_expect_eq(dis_decode(bad, sizeof(bad), ADDR, &insn), -1);
	cr_expect_eq(dis_accesses(&insn, bad, &regs, acc, DIS_MAX_ACCESSES), -1);
	insn = decode_ok(gather, sizeof(gather));
	cr_expect(insn.flags & DIS_F_MEM);
	cr_expect_eq(dis_accesses(&insn, gather, &regs, acc, DIS_MAX_ACCESSES), -1);
	/* unknown address: a stepper must stop there rather than miss it */
	cr_expect(dis_matches(&insn, gather, &regs, DIS_WANT_MEM));
	cr_expect(!dis_matches(&insn, gather, &regs, DIS_WANT_CALL));
}

/* --- dis_matches --- */

static bool matches(const uint8_t *code, size_t n, const struct user_regs_struct *regs,
		    unsigned want)
{
	struct dis_insn insn = decode_ok(code, n);

	return dis_matches(&insn, code, regs, want);
}

#define ANY_MEM (DIS_WANT_MEM | DIS_WANT_STACK_MEM)

Test(matches, memory_wants)
{
	const uint8_t push[] = {0x55};			      /* push rbp */
	const uint8_t load[] = {0x8b, 0x05, 0x10, 0, 0, 0};   /* mov eax, [rip+0x10] */
	const uint8_t store[] = {0x89, 0x4c, 0x98, 0x08};     /* mov [rax+rbx*4+8], ecx */
	const uint8_t rmw[] = {0x83, 0x00, 0x01};	      /* add dword [rax], 1 */
	const uint8_t spill[] = {0x48, 0x89, 0x45, 0xf8};     /* mov [rbp-8], rax */
	const uint8_t lea[] = {0x48, 0x8d, 0x05, 0, 1, 0, 0}; /* lea rax, [rip+0x100] */
	const uint8_t push_mem[] = {0xff, 0x30};	      /* push qword [rax] */
	struct user_regs_struct regs = test_regs();

	cr_expect(!matches(push, 1, &regs, DIS_WANT_MEM));
	cr_expect(matches(push, 1, &regs, DIS_WANT_STACK_MEM));
	cr_expect(matches(push, 1, &regs, ANY_MEM));
	cr_expect(!matches(push, 1, &regs, ANY_MEM | DIS_WANT_READ));
	cr_expect(matches(load, sizeof(load), &regs, DIS_WANT_MEM));
	cr_expect(matches(load, sizeof(load), &regs, DIS_WANT_MEM | DIS_WANT_READ));
	cr_expect(!matches(load, sizeof(load), &regs, DIS_WANT_MEM | DIS_WANT_WRITE));
	cr_expect(!matches(load, sizeof(load), &regs, DIS_WANT_STACK_MEM));
	cr_expect(matches(store, sizeof(store), &regs, DIS_WANT_MEM | DIS_WANT_WRITE));
	cr_expect(!matches(store, sizeof(store), &regs, DIS_WANT_MEM | DIS_WANT_READ));
	cr_expect(matches(rmw, sizeof(rmw), &regs, DIS_WANT_MEM | DIS_WANT_READ));
	cr_expect(matches(rmw, sizeof(rmw), &regs, DIS_WANT_MEM | DIS_WANT_WRITE));
	cr_expect(!matches(spill, sizeof(spill), &regs, DIS_WANT_MEM));
	cr_expect(matches(spill, sizeof(spill), &regs, ANY_MEM));
	cr_expect(!matches(lea, sizeof(lea), &regs, ANY_MEM));
	/* the read of [rax] is not stack, the push is: a read-only want sees the first */
	cr_expect(matches(push_mem, sizeof(push_mem), &regs, DIS_WANT_MEM | DIS_WANT_READ));
	cr_expect(!matches(push_mem, sizeof(push_mem), &regs, DIS_WANT_MEM | DIS_WANT_WRITE));
	cr_expect(matches(push_mem, sizeof(push_mem), &regs, ANY_MEM | DIS_WANT_WRITE));
	cr_expect(!matches(load, sizeof(load), &regs, 0));
}

Test(matches, calls_returns_syscalls)
{
	const uint8_t call[] = {0xe8, 0x10, 0, 0, 0};
	const uint8_t call_mem[] = {0xff, 0x15, 0x00, 0x02, 0, 0}; /* call [rip+0x200] */
	const uint8_t call_reg[] = {0xff, 0xd0};		   /* call rax */
	const uint8_t jmp_mem[] = {0xff, 0x20};			   /* jmp [rax] */
	const uint8_t ret[] = {0xc3};
	const uint8_t sys[] = {0x0f, 0x05}, int80[] = {0xcd, 0x80};
	struct user_regs_struct regs = test_regs();

	cr_expect(matches(call, sizeof(call), &regs, DIS_WANT_CALL));
	cr_expect(matches(call_reg, sizeof(call_reg), &regs, DIS_WANT_CALL));
	cr_expect(matches(call_mem, sizeof(call_mem), &regs, DIS_WANT_CALL));
	cr_expect(!matches(jmp_mem, sizeof(jmp_mem), &regs, DIS_WANT_CALL));
	cr_expect(!matches(call, sizeof(call), &regs, DIS_WANT_MEM), "the push is stack");
	cr_expect(matches(call, sizeof(call), &regs, DIS_WANT_STACK_MEM));
	cr_expect(matches(call_mem, sizeof(call_mem), &regs, DIS_WANT_MEM), "loads the pointer");
	cr_expect(matches(ret, sizeof(ret), &regs, DIS_WANT_RET));
	cr_expect(!matches(ret, sizeof(ret), &regs, DIS_WANT_CALL | DIS_WANT_SYSCALL));
	cr_expect(!matches(call, sizeof(call), &regs, DIS_WANT_RET));
	cr_expect(matches(sys, sizeof(sys), &regs, DIS_WANT_SYSCALL));
	cr_expect(matches(int80, sizeof(int80), &regs, DIS_WANT_SYSCALL));
	cr_expect(!matches(sys, sizeof(sys), &regs, ANY_MEM | DIS_WANT_CALL | DIS_WANT_RET));
}

/* --- dis_scan --- */

/* A function prologue, then a load and a store of a global, then a loop branch. */
static const uint8_t prog[] = {
    0x55,				/*  0: push rbp            (stack) */
    0x48, 0x89, 0xe5,			/*  1: mov rbp, rsp                */
    0x48, 0x89, 0x7d, 0xf8,		/*  4: mov [rbp-8], rdi    (stack) */
    0x8b, 0x05, 0x00, 0x01, 0,	  0,	/*  8: mov eax, [rip+0x100] (read) */
    0x83, 0xc0, 0x01,			/* 14: add eax, 1                  */
    0x89, 0x05, 0x00, 0x01, 0,	  0,	/* 17: mov [rip+0x100], eax (write) */
    0x83, 0xf8, 0x05,			/* 23: cmp eax, 5                  */
    0x75, 0xe4,				/* 26: jne 0 (rel8 -28)            */
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, /* 28: padding                   */
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
};

Test(scan, stops_at_first_non_stack_access)
{
	struct dis_insn stop;

	cr_assert_eq(dis_scan(prog, sizeof(prog), ADDR, DIS_WANT_MEM, &stop), 8);
	cr_expect_eq(stop.addr, ADDR + 8);
	cr_expect_eq(stop.kind, DIS_OTHER);
	cr_expect_str_eq(stop.text, "mov eax, dword ptr [rip + 0x100]");
	/* resuming after it: the store is next */
	cr_expect_eq(dis_scan(prog + 14, sizeof(prog) - 14, ADDR + 14, DIS_WANT_MEM, &stop), 3);
	cr_expect_eq(stop.addr, ADDR + 17);
	cr_expect_eq(stop.access_size, 4);
}

Test(scan, stack_accesses_only_when_wanted)
{
	struct dis_insn stop;

	cr_expect_eq(dis_scan(prog, sizeof(prog), ADDR, ANY_MEM, &stop), 0);
	cr_expect_eq(dis_scan(prog + 1, sizeof(prog) - 1, ADDR + 1, ANY_MEM, &stop), 3);
	cr_expect_eq(stop.addr, ADDR + 4);
	cr_expect(stop.flags & DIS_F_STACK);
	cr_expect_eq(dis_scan(prog, sizeof(prog), ADDR, DIS_WANT_STACK_MEM, &stop), 0);
	cr_expect_eq(dis_scan(prog + 8, sizeof(prog) - 8, ADDR + 8, DIS_WANT_STACK_MEM, &stop), 18,
		     "stack-only scan stops at the jcc, not at the global accesses");
}

Test(scan, read_or_write_narrows)
{
	struct dis_insn stop;

	cr_expect_eq(dis_scan(prog, sizeof(prog), ADDR, DIS_WANT_MEM | DIS_WANT_WRITE, &stop), 17);
	cr_expect_eq(dis_scan(prog, sizeof(prog), ADDR, DIS_WANT_MEM | DIS_WANT_READ, &stop), 8);
}

Test(scan, stops_at_branch)
{
	struct dis_insn stop;

	/* nothing wanted from memory: only the jcc stops it */
	cr_assert_eq(dis_scan(prog, sizeof(prog), ADDR, DIS_WANT_CALL | DIS_WANT_RET, &stop), 26);
	cr_expect_eq(stop.kind, DIS_JCC);
	cr_expect_eq(stop.target, ADDR);
	cr_expect_eq(stop.len, 2);
	cr_expect_eq(dis_scan(prog + 17, sizeof(prog) - 17, ADDR + 17, 0, &stop), 9);
}

Test(scan, stops_at_every_kind_of_transfer)
{
	static const struct {
		uint8_t bytes[8];
		unsigned len;
		enum dis_kind kind;
	} transfers[] = {
	    {{0xe8, 0x10, 0, 0, 0}, 5, DIS_CALL},
	    {{0xeb, 0x10}, 2, DIS_JUMP},
	    {{0xc3}, 1, DIS_RET},
	    {{0xff, 0xe0}, 2, DIS_INDIRECT}, /* jmp rax */
	    {{0x0f, 0x05}, 2, DIS_SYSCALL},
	    {{0xcc}, 1, DIS_TRAP},
	    {{0xf4}, 1, DIS_TRAP},
	    {{0x0f, 0x0b}, 2, DIS_TRAP},
	    {{0xe3, 0x10}, 2, DIS_JCC}, /* jrcxz */
	};

	for (size_t i = 0; i < sizeof(transfers) / sizeof(transfers[0]); i++) {
		uint8_t code[32];
		struct dis_insn stop;

		memset(code, 0x90, sizeof(code));
		memcpy(code + 3, transfers[i].bytes, transfers[i].len);
		cr_expect_eq(dis_scan(code, sizeof(code), ADDR, 0, &stop), 3, "#%zu", i);
		cr_expect_eq(stop.kind, transfers[i].kind, "#%zu: kind %d", i, stop.kind);
		cr_expect_eq(stop.len, transfers[i].len, "#%zu", i);
	}
}

Test(scan, rep_string_op_may_access)
{
	/* classification has no rcx: rep stosd is a candidate, dis_matches decides */
	const uint8_t code[] = {0x90, 0xf3, 0xab, 0x90, 0xc3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	struct user_regs_struct regs = test_regs();
	struct dis_insn stop;

	cr_assert_eq(dis_scan(code, sizeof(code), ADDR, DIS_WANT_MEM, &stop), 1);
	cr_expect(stop.flags & DIS_F_STRING);
	regs.rcx = 0;
	cr_expect(!dis_matches(&stop, code + 1, &regs, DIS_WANT_MEM));
	regs.rcx = 2;
	cr_expect(dis_matches(&stop, code + 1, &regs, DIS_WANT_MEM));
}

Test(scan, truncated_buffer)
{
	struct dis_insn stop;

	/* the load at 8 is cut after 2 of its 6 bytes */
	cr_expect_eq(dis_scan(prog, 10, ADDR, DIS_WANT_MEM, &stop), 8);
	cr_expect_eq(stop.kind, DIS_INVALID);
	cr_expect_eq(stop.addr, ADDR + 8);
	cr_expect_eq(stop.len, 0);
	/* the buffer ends exactly at an instruction boundary */
	cr_expect_eq(dis_scan(prog, 8, ADDR, DIS_WANT_MEM, &stop), 8);
	cr_expect_eq(stop.kind, DIS_INVALID);
	/* reading on from where it stopped finds it */
	cr_expect_eq(dis_scan(prog + 8, sizeof(prog) - 8, ADDR + 8, DIS_WANT_MEM, &stop), 0);
	cr_expect_eq(stop.kind, DIS_OTHER);
}

Test(scan, undecodable)
{
	uint8_t code[20];
	struct dis_insn stop;

	memset(code, 0x90, sizeof(code));
	code[2] = 0x06; /* push es: invalid in 64-bit mode */
	cr_expect_eq(dis_scan(code, sizeof(code), ADDR, DIS_WANT_MEM, &stop), 2);
	cr_expect_eq(stop.kind, DIS_INVALID);
	cr_expect_eq(stop.addr, ADDR + 2);
	cr_expect_eq(dis_scan(code + 2, sizeof(code) - 2, ADDR + 2, DIS_WANT_MEM, &stop), -1);
	cr_expect_eq(stop.kind, DIS_INVALID);
	cr_expect_eq(dis_scan(code, 0, ADDR, DIS_WANT_MEM, &stop), -1);
	cr_expect_eq(stop.kind, DIS_INVALID);
}

/* --- dis_next_pc --- */

struct fake_mem {
	uint64_t base;
	uint64_t words[4];
	bool broken;
};

static int fake_peek(void *ctx, uint64_t addr, uint64_t *value)
{
	struct fake_mem *m = ctx;
	uint64_t i = (addr - m->base) / 8;

	if (m->broken || addr < m->base || (addr - m->base) % 8 || i >= 4)
		return -1;
	*value = m->words[i];
	return 0;
}

static uint64_t next_pc(const uint8_t *code, size_t n, const struct user_regs_struct *regs,
			struct fake_mem *m)
{
	struct dis_insn insn = decode_ok(code, n);
	struct user_regs_struct before = *regs;
	uint64_t next = 0;

	cr_assert_eq(dis_next_pc(&insn, code, regs, fake_peek, m, &next), 0, "%s", insn.text);
	cr_expect_eq(memcmp(regs, &before, sizeof(before)), 0, "%s changed regs", insn.text);
	return next;
}

Test(next_pc, conditional)
{
	const uint8_t jne[] = {0x75, 0x10}, jrcxz[] = {0xe3, 0x10}, loop[] = {0xe2, 0xfe};
	const uint8_t je32[] = {0x0f, 0x84, 0x00, 0x01, 0, 0};
	struct user_regs_struct regs = test_regs();

	regs.eflags = 0;
	cr_expect_eq(next_pc(jne, 2, &regs, NULL), ADDR + 2 + 0x10, "jne taken");
	cr_expect_eq(next_pc(je32, 6, &regs, NULL), ADDR + 6, "je not taken");
	regs.eflags = F_ZF;
	cr_expect_eq(next_pc(jne, 2, &regs, NULL), ADDR + 2, "jne not taken");
	cr_expect_eq(next_pc(je32, 6, &regs, NULL), ADDR + 6 + 0x100, "je taken");
	regs.rcx = 0;
	cr_expect_eq(next_pc(jrcxz, 2, &regs, NULL), ADDR + 2 + 0x10, "jrcxz taken");
	regs.rcx = 3;
	cr_expect_eq(next_pc(jrcxz, 2, &regs, NULL), ADDR + 2, "jrcxz not taken");
	cr_expect_eq(next_pc(loop, 2, &regs, NULL), ADDR, "loop with rcx 3 -> 2: taken");
	regs.rcx = 1;
	cr_expect_eq(next_pc(loop, 2, &regs, NULL), ADDR + 2, "loop with rcx 1 -> 0: falls");
}

Test(next_pc, direct_and_straight)
{
	const uint8_t call[] = {0xe8, 0x10, 0, 0, 0}, jmp[] = {0xeb, 0xfe};
	const uint8_t load[] = {0x8b, 0x05, 0x10, 0, 0, 0}, sys[] = {0x0f, 0x05};
	struct user_regs_struct regs = test_regs();

	cr_expect_eq(next_pc(call, 5, &regs, NULL), ADDR + 5 + 0x10);
	cr_expect_eq(next_pc(jmp, 2, &regs, NULL), ADDR);
	cr_expect_eq(next_pc(load, 6, &regs, NULL), ADDR + 6);
	cr_expect_eq(next_pc(sys, 2, &regs, NULL), ADDR + 2);
}

Test(next_pc, ret)
{
	const uint8_t ret[] = {0xc3}, ret8[] = {0xc2, 0x08, 0x00};
	struct user_regs_struct regs = test_regs();
	struct fake_mem m = {.base = RSP, .words = {0x401234, 0x405678}};

	cr_expect_eq(next_pc(ret, 1, &regs, &m), 0x401234);
	cr_expect_eq(next_pc(ret8, 3, &regs, &m), 0x401234, "imm16 is popped after the return");
	regs.rsp = RSP + 8;
	cr_expect_eq(next_pc(ret, 1, &regs, &m), 0x405678);
}

Test(next_pc, indirect)
{
	const uint8_t call_rax[] = {0xff, 0xd0};       /* FF /2, ModRM 11 010 000 */
	const uint8_t jmp_r11[] = {0x41, 0xff, 0xe3};  /* REX.B FF /4, ModRM 11 100 011 */
	const uint8_t call_mem[] = {0xff, 0x50, 0x08}; /* call [rax+8]: ModRM 01 010 000 */
	const uint8_t jmp_rip[] = {0xff, 0x25, 0x00, 0x02, 0, 0}; /* jmp [rip+0x200] (PLT style) */
	const uint8_t jmp_rsp[] = {0xff, 0x64, 0x24, 0x08};	  /* jmp [rsp+8]: SIB base rsp */
	struct user_regs_struct regs = test_regs();
	struct fake_mem heap = {.base = RAX, .words = {0, 0x409000}};
	struct fake_mem got = {.base = ADDR + 6 + 0x200, .words = {0x7f0000123450}};
	struct fake_mem stack = {.base = RSP, .words = {0, 0x40a000}};

	regs.r11 = 0x40b000;
	cr_expect_eq(next_pc(call_rax, 2, &regs, NULL), RAX);
	cr_expect_eq(next_pc(jmp_r11, 3, &regs, NULL), 0x40b000);
	cr_expect_eq(next_pc(call_mem, 3, &regs, &heap), 0x409000);
	cr_expect_eq(next_pc(jmp_rip, 6, &regs, &got), 0x7f0000123450);
	cr_expect_eq(next_pc(jmp_rsp, 4, &regs, &stack), 0x40a000);
}

Test(next_pc, failures)
{
	const uint8_t ret[] = {0xc3}, ud2[] = {0x0f, 0x0b}, int3[] = {0xcc};
	const uint8_t call_mem[] = {0xff, 0x50, 0x08};
	struct user_regs_struct regs = test_regs();
	struct fake_mem m = {.base = RSP, .broken = true};
	struct dis_insn insn;
	uint64_t next = 0x1111;

	insn = decode_ok(ret, sizeof(ret));
	cr_expect_eq(dis_next_pc(&insn, ret, &regs, fake_peek, &m, &next), -1, "unreadable");
	cr_expect_eq(dis_next_pc(&insn, ret, &regs, NULL, NULL, &next), -1, "no peek");
	insn = decode_ok(call_mem, sizeof(call_mem));
	cr_expect_eq(dis_next_pc(&insn, call_mem, &regs, fake_peek, &m, &next), -1);
	insn = decode_ok(ud2, sizeof(ud2));
	cr_expect_eq(dis_next_pc(&insn, ud2, &regs, fake_peek, &m, &next), -1);
	insn = decode_ok(int3, sizeof(int3));
	cr_expect_eq(dis_next_pc(&insn, int3, &regs, fake_peek, &m, &next), -1);
	cr_expect_eq(next, 0x1111, "*next untouched on failure");
}

Test(scan, repeated_scans_see_changed_code)
{
	uint8_t code[sizeof(prog)];
	struct dis_insn stop;

	memcpy(code, prog, sizeof(code));
	cr_expect_eq(dis_scan(code, sizeof(code), ADDR, DIS_WANT_MEM, &stop), 8);
	cr_expect_eq(dis_scan(code, sizeof(code), ADDR, DIS_WANT_MEM, &stop), 8);
	cr_expect_str_eq(stop.text, "mov eax, dword ptr [rip + 0x100]");
	cr_expect_eq(stop.len, 6);
	/* same address, fewer bytes than the first answer needed: no stale result */
	cr_expect_eq(dis_scan(code, 12, ADDR, DIS_WANT_MEM, &stop), 8);
	cr_expect_eq(stop.kind, DIS_INVALID);
	/* the spill at 4 becomes mov [rax-8], rdi (ModRM 01 111 000): a heap store */
	code[6] = 0x78;
	cr_expect_eq(dis_scan(code, sizeof(code), ADDR, DIS_WANT_MEM, &stop), 4);
	cr_expect_str_eq(stop.text, "mov qword ptr [rax - 8], rdi");
	/* an int3 planted at 1 (as a tracer might leave it) stops the scan there */
	code[1] = 0xcc;
	cr_expect_eq(dis_scan(code, sizeof(code), ADDR, DIS_WANT_MEM, &stop), 1);
	cr_expect_eq(stop.kind, DIS_TRAP);
}

Test(decode, same_address_other_bytes)
{
	const uint8_t load[] = {0x8b, 0x05, 0x10, 0, 0, 0};  /* mov eax, [rip+0x10] */
	const uint8_t store[] = {0x89, 0x05, 0x10, 0, 0, 0}; /* mov [rip+0x10], eax */
	struct user_regs_struct regs = test_regs();
	struct dis_access acc[DIS_MAX_ACCESSES];
	struct dis_insn a, b;

	cr_assert_eq(dis_decode(load, sizeof(load), ADDR, &a), 0);
	cr_assert_eq(dis_decode(store, sizeof(store), ADDR, &b), 0);
	cr_expect_eq(a.mem_access, DIS_READ);
	cr_expect_eq(b.mem_access, DIS_WRITE);
	/* dis_accesses decodes the bytes it is given, not what was decoded last */
	cr_assert_eq(dis_accesses(&a, load, &regs, acc, DIS_MAX_ACCESSES), 1);
	cr_expect_eq(acc[0].rw, DIS_READ);
	cr_assert_eq(dis_accesses(&b, store, &regs, acc, DIS_MAX_ACCESSES), 1);
	cr_expect_eq(acc[0].rw, DIS_WRITE);
	/* the same bytes cut short do not decode, even right after a full decode */
	cr_expect_eq(dis_decode(store, 4, ADDR, &b), -1);
}

Test(access, overlaps)
{
	struct dis_access word = {.addr = 0x1000, .size = 4, .rw = DIS_READ, .count = 1};
	struct dis_access copy = {.addr = 0x2000, .size = 8, .rw = DIS_WRITE, .count = 16};
	struct dis_access down = copy;
	struct dis_access huge = {.addr = 0x3000, .size = 8, .count = UINT64_MAX};

	cr_expect(dis_access_overlaps(&word, 0x1000, 4));
	cr_expect(dis_access_overlaps(&word, 0x1003, 1), "last byte");
	cr_expect(dis_access_overlaps(&word, 0xff0, 0x11), "a range ending on its first byte");
	cr_expect(!dis_access_overlaps(&word, 0x1004, 8), "just past it");
	cr_expect(!dis_access_overlaps(&word, 0xff0, 0x10), "just before it");
	cr_expect(!dis_access_overlaps(&word, 0x1000, 0), "empty range");
	/* rep movsq of 16 qwords from 0x2000 up: [0x2000, 0x2080) */
	cr_expect(dis_access_overlaps(&copy, 0x2078, 8));
	cr_expect(!dis_access_overlaps(&copy, 0x2080, 8));
	/* with DF set the elements go down: [0x1f88, 0x2008) */
	down.descending = true;
	cr_expect(dis_access_overlaps(&down, 0x1f88, 1));
	cr_expect(!dis_access_overlaps(&down, 0x1f80, 8));
	cr_expect(!dis_access_overlaps(&down, 0x2008, 8));
	/* an absurd rcx saturates instead of wrapping around */
	cr_expect(dis_access_overlaps(&huge, UINT64_MAX - 8, 4));
	cr_expect(!dis_access_overlaps(&huge, 0x2ff8, 8));
}
