/*
 * test_disasm: the disasm module against hand-assembled instructions.
 *
 * The byte strings below were encoded by hand from the Intel SDM opcode
 * tables (ModRM/SIB layouts noted in the comments), not produced by an
 * assembler, so the test does not merely echo capstone back at itself.
 * The table checks decoding (kind, length, access, target) and effective
 * addresses under one fixed register file; the rest checks slot building,
 * emulation and the watchpoint look-back, and finally executes relocated
 * slots for real in pages of this process.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "disasm/disasm.h"

#define ADDR 0x401000ull
#define NOEA 0ull /* "has no effective address" in the table */
#define RW   (DIS_READ | DIS_WRITE)

static struct user_regs_struct test_regs(void)
{
	struct user_regs_struct r;

	memset(&r, 0, sizeof(r));
	r.rax = 0x10000;
	r.rbx = 0x20;
	r.rcx = 0x3;
	r.rdi = 0x7000;
	r.rsi = 0x8000;
	r.rbp = 0x7ffe0100;
	r.rsp = 0x7ffe0000;
	r.fs_base = 0x7f0000001000;
	r.gs_base = 0x7f0000900000;
	r.rip = ADDR;
	return r;
}

struct row {
	const char *name;
	uint8_t bytes[DIS_MAX_INSN];
	unsigned len;
	enum dis_kind kind;
	unsigned access;
	uint64_t target;   /* 0 unless a relative branch */
	uint64_t ea;	   /* NOEA if dis_effective_address must fail */
	unsigned disp_off; /* 0 unless rip-relative */
};

static const struct row rows[] = {
    /* 8B /r, ModRM 00 000 101 = [rip+disp32] */
    {"mov eax, [rip+0x10]",
     {0x8b, 0x05, 0x10, 0, 0, 0},
     6,
     DIS_OTHER,
     DIS_READ,
     0,
     ADDR + 6 + 0x10,
     2},
    /* 89 /r, ModRM 01 001 100 (ecx, SIB+disp8), SIB 10 011 000 (rbx*4 + rax) */
    {"mov [rax+rbx*4+8], ecx",
     {0x89, 0x4c, 0x98, 0x08},
     4,
     DIS_OTHER,
     DIS_WRITE,
     0,
     0x10000 + 0x20 * 4 + 8,
     0},
    /* 83 /0 ib */
    {"add dword [rax], 1", {0x83, 0x00, 0x01}, 3, DIS_OTHER, RW, 0, 0x10000, 0},
    /* F0 0F B1 /r, ModRM 00 110 111 */
    {"lock cmpxchg [rdi], esi", {0xf0, 0x0f, 0xb1, 0x37}, 4, DIS_OTHER, RW, 0, 0x7000, 0},
    /* 64 REX.W 8B /r, ModRM 00 000 100, SIB 00 100 101 = disp32, no base */
    {"mov rax, fs:[0x28]",
     {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0},
     9,
     DIS_OTHER,
     DIS_READ,
     0,
     0x7f0000001000 + 0x28,
     0},
    {"mov rax, gs:[0x10]",
     {0x65, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0},
     9,
     DIS_OTHER,
     DIS_READ,
     0,
     0x7f0000900000 + 0x10,
     0},
    {"push rbp", {0x55}, 1, DIS_OTHER, 0, 0, NOEA, 0},
    {"pop rbx", {0x5b}, 1, DIS_OTHER, 0, 0, NOEA, 0},
    /* FF /6, ModRM 00 110 000 */
    {"push qword [rax]", {0xff, 0x30}, 2, DIS_OTHER, DIS_READ, 0, 0x10000, 0},
    {"call rel32", {0xe8, 0x10, 0, 0, 0}, 5, DIS_CALL, 0, ADDR + 5 + 0x10, NOEA, 0},
    {"ret", {0xc3}, 1, DIS_RET, 0, 0, NOEA, 0},
    {"ret 8", {0xc2, 0x08, 0x00}, 3, DIS_RET, 0, 0, NOEA, 0},
    {"jmp rel8", {0xeb, 0x10}, 2, DIS_JUMP, 0, ADDR + 2 + 0x10, NOEA, 0},
    {"jmp rel8 backwards", {0xeb, 0xfe}, 2, DIS_JUMP, 0, ADDR, NOEA, 0},
    {"jmp rel32", {0xe9, 0x00, 0x01, 0, 0}, 5, DIS_JUMP, 0, ADDR + 5 + 0x100, NOEA, 0},
    {"jne rel8", {0x75, 0x10}, 2, DIS_JCC, 0, ADDR + 2 + 0x10, NOEA, 0},
    {"je rel32", {0x0f, 0x84, 0x00, 0x01, 0, 0}, 6, DIS_JCC, 0, ADDR + 6 + 0x100, NOEA, 0},
    {"jrcxz", {0xe3, 0x10}, 2, DIS_JCC, 0, ADDR + 2 + 0x10, NOEA, 0},
    {"loop", {0xe2, 0xfe}, 2, DIS_JCC, 0, ADDR, NOEA, 0},
    /* FF /4, ModRM 00 100 101 */
    {"jmp [rip+0x200]",
     {0xff, 0x25, 0x00, 0x02, 0, 0},
     6,
     DIS_INDIRECT,
     DIS_READ,
     0,
     ADDR + 6 + 0x200,
     2},
    /* FF /2, ModRM 11 010 000 */
    {"call rax", {0xff, 0xd0}, 2, DIS_INDIRECT, 0, 0, NOEA, 0},
    {"syscall", {0x0f, 0x05}, 2, DIS_SYSCALL, 0, 0, NOEA, 0},
    /* the first memory operand of movs is the destination, [rdi] */
    {"rep movsb", {0xf3, 0xa4}, 2, DIS_OTHER, RW, 0, 0x7000, 0},
    /* REX.W 8D /r: an address, never an access */
    {"lea rax, [rip+0x100]",
     {0x48, 0x8d, 0x05, 0x00, 0x01, 0, 0},
     7,
     DIS_OTHER,
     0,
     0,
     ADDR + 7 + 0x100,
     3},
    {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, DIS_OTHER, 0, 0, NOEA, 0},
    {"nop", {0x90}, 1, DIS_OTHER, 0, 0, NOEA, 0},
    /* 0F 1F /0, the multi-byte nop: a memory operand nobody touches */
    {"nop dword [rax+rax]", {0x0f, 0x1f, 0x44, 0x00, 0x00}, 5, DIS_OTHER, 0, 0, 0x20000, 0},
    /* capstone 4 gets these access flags wrong */
    {"cmp [rdi], eax", {0x39, 0x07}, 2, DIS_OTHER, DIS_READ, 0, 0x7000, 0},
    {"test byte [rax], 1", {0xf6, 0x00, 0x01}, 3, DIS_OTHER, DIS_READ, 0, 0x10000, 0},
    {"movups [rdi], xmm0", {0x0f, 0x11, 0x07}, 3, DIS_OTHER, DIS_WRITE, 0, 0x7000, 0},
    {"setae byte [rax]", {0x0f, 0x93, 0x00}, 3, DIS_OTHER, DIS_WRITE, 0, 0x10000, 0},
    {"xchg [rdi], rax", {0x48, 0x87, 0x07}, 3, DIS_OTHER, RW, 0, 0x7000, 0},
    /* REX.W 89 /r, ModRM 00 000 101 */
    {"mov [rip+0x10], rax",
     {0x48, 0x89, 0x05, 0x10, 0, 0, 0},
     7,
     DIS_OTHER,
     DIS_WRITE,
     0,
     ADDR + 7 + 0x10,
     3},
    /* C7 /0 id with rip-relative: disp32 sits before the imm32 */
    {"mov dword [rip+0x10], 1",
     {0xc7, 0x05, 0x10, 0, 0, 0, 1, 0, 0, 0},
     10,
     DIS_OTHER,
     DIS_WRITE,
     0,
     ADDR + 10 + 0x10,
     2},
    /* 67 8B /r: 32-bit address size, [eax] */
    {"mov eax, [eax]", {0x67, 0x8b, 0x00}, 3, DIS_OTHER, DIS_READ, 0, 0x10000, 0},
    /* REX.W 8B /r, ModRM 01 000 101 = [rbp+disp8] */
    {"mov rax, [rbp-8]", {0x48, 0x8b, 0x45, 0xf8}, 4, DIS_OTHER, DIS_READ, 0, 0x7ffe0100 - 8, 0},
};

Test(disasm, table)
{
	struct user_regs_struct regs = test_regs();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *t = &rows[i];
		struct dis_insn insn;
		uint64_t ea = 0;
		int rc;

		cr_assert_eq(dis_decode(t->bytes, t->len, ADDR, &insn), 0, "%s: decode", t->name);
		cr_expect_eq(insn.addr, ADDR, "%s: addr", t->name);
		cr_expect_eq(insn.len, t->len, "%s: len %u", t->name, insn.len);
		cr_expect_eq(insn.kind, t->kind, "%s: kind %d", t->name, insn.kind);
		cr_expect_eq(insn.mem_access, t->access, "%s: access %u", t->name, insn.mem_access);
		cr_expect_eq(insn.target, t->target, "%s: target %#lx", t->name,
			     (unsigned long)insn.target);
		cr_expect_eq(insn.rip_relative, t->disp_off != 0, "%s: rip_relative", t->name);
		cr_expect_eq(insn.disp_offset, t->disp_off, "%s: disp_offset %u", t->name,
			     insn.disp_offset);
		rc = dis_effective_address(&insn, t->bytes, &regs, &ea);
		if (t->ea == NOEA) {
			cr_expect_eq(rc, -1, "%s: unexpected effective address", t->name);
			continue;
		}
		cr_expect_eq(rc, 0, "%s: no effective address", t->name);
		cr_expect_eq(ea, t->ea, "%s: ea %#lx, expected %#lx", t->name, (unsigned long)ea,
			     (unsigned long)t->ea);
	}
}

Test(disasm, decodes_with_trailing_bytes)
{
	/* nop followed by more code: only the first instruction is decoded */
	const uint8_t code[] = {0x90, 0x48, 0x8b, 0x05, 0, 0, 0, 0};
	struct dis_insn insn;

	cr_assert_eq(dis_decode(code, sizeof(code), ADDR, &insn), 0);
	cr_expect_eq(insn.len, 1);
}

Test(disasm, text)
{
	const uint8_t load[] = {0x8b, 0x05, 0x10, 0, 0, 0};
	const uint8_t cas[] = {0xf0, 0x0f, 0xb1, 0x37};
	const uint8_t ret[] = {0xc3};
	struct dis_insn insn;

	dis_decode(load, sizeof(load), ADDR, &insn);
	cr_expect_str_eq(insn.text, "mov eax, dword ptr [rip + 0x10]");
	dis_decode(cas, sizeof(cas), ADDR, &insn);
	cr_expect_str_eq(insn.text, "lock cmpxchg dword ptr [rdi], esi");
	dis_decode(ret, sizeof(ret), ADDR, &insn);
	cr_expect_str_eq(insn.text, "ret");
}

Test(disasm, invalid)
{
	const uint8_t bad[] = {0x06};		  /* push es: not in 64-bit mode */
	const uint8_t truncated[] = {0xe8, 0x10}; /* call rel32 cut short */
	struct dis_insn insn;

	cr_expect_eq(dis_decode(bad, sizeof(bad), ADDR, &insn), -1);
	cr_expect_eq(insn.kind, DIS_INVALID);
	cr_expect_eq(dis_decode(truncated, sizeof(truncated), ADDR, &insn), -1);
	cr_expect_eq(insn.kind, DIS_INVALID);
}

/* --- slots --- */

static struct dis_insn decode_ok(const uint8_t *code, size_t n, uint64_t addr)
{
	struct dis_insn insn;

	cr_assert_eq(dis_decode(code, n, addr, &insn), 0);
	return insn;
}

/* The slot ends with a jmp rel32 at pos that lands on insn's next address. */
static void expect_jmp_back(const uint8_t *slot, int pos, uint64_t slot_addr,
			    const struct dis_insn *orig)
{
	struct dis_insn jmp = decode_ok(slot + pos, DIS_SLOT_SIZE - pos, slot_addr + pos);

	cr_expect_eq(slot[pos], 0xe9);
	cr_expect_eq(jmp.kind, DIS_JUMP);
	cr_expect_eq(jmp.len, 5);
	cr_expect_eq(jmp.target, orig->addr + orig->len);
}

static void check_rip_relative_slot(uint64_t slot_addr)
{
	const uint8_t code[] = {0x8b, 0x05, 0x10, 0, 0, 0}; /* mov eax, [rip+0x10] */
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR), moved;
	uint8_t slot[DIS_SLOT_SIZE];
	uint64_t ea_orig, ea_moved;

	cr_assert_eq(dis_build_slot(&insn, code, slot_addr, slot), 6 + 5);
	moved = decode_ok(slot, sizeof(slot), slot_addr);
	cr_expect_eq(moved.len, 6);
	cr_expect(moved.rip_relative);
	cr_assert_eq(dis_effective_address(&insn, code, &regs, &ea_orig), 0);
	cr_assert_eq(dis_effective_address(&moved, slot, &regs, &ea_moved), 0);
	cr_expect_eq(ea_moved, ea_orig, "%#lx != %#lx", (unsigned long)ea_moved,
		     (unsigned long)ea_orig);
	expect_jmp_back(slot, 6, slot_addr, &insn);
}

Test(slot, rip_relative_load_above)
{
	check_rip_relative_slot(ADDR + (1u << 20));
}

Test(slot, rip_relative_load_below)
{
	check_rip_relative_slot(ADDR - (1u << 20));
}

Test(slot, rip_relative_store_with_immediate)
{
	/* disp32 is not the last field: the imm32 after it must survive */
	const uint8_t code[] = {0xc7, 0x05, 0x10, 0, 0, 0, 0x78, 0x56, 0x34, 0x12};
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR);
	uint8_t slot[DIS_SLOT_SIZE];
	uint64_t slot_addr = ADDR + 0x12345;
	int32_t disp;

	cr_assert_eq(dis_build_slot(&insn, code, slot_addr, slot), 10 + 5);
	memcpy(&disp, slot + 2, sizeof(disp));
	cr_expect_eq((int64_t)disp, 0x10 + (int64_t)ADDR - (int64_t)slot_addr);
	cr_expect_eq(memcmp(slot + 6, code + 6, 4), 0);
	expect_jmp_back(slot, 10, slot_addr, &insn);
}

/* A 66 prefix made capstone report a 2-byte displacement: the slot then
 * kept the old one, and movdqa faulted on the misaligned address. */
Test(slot, rip_relative_sse_with_operand_size_prefix)
{
	const uint8_t code[] = {0x66, 0x0f, 0x6f, 0x05, 0xb7, 0xba, 0x01, 0x00}; /* movdqa */
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR), moved;
	uint64_t slot_addr = ADDR - 0x1eeb1, ea_orig, ea_moved;
	uint8_t slot[DIS_SLOT_SIZE];

	cr_expect(insn.rip_relative);
	cr_expect_eq(insn.disp_offset, 4);
	cr_assert_eq(dis_build_slot(&insn, code, slot_addr, slot), 8 + 5);
	moved = decode_ok(slot, sizeof(slot), slot_addr);
	cr_assert_eq(dis_effective_address(&insn, code, &regs, &ea_orig), 0);
	cr_assert_eq(dis_effective_address(&moved, slot, &regs, &ea_moved), 0);
	cr_expect_eq(ea_moved, ea_orig, "%#lx != %#lx", (unsigned long)ea_moved,
		     (unsigned long)ea_orig);
	expect_jmp_back(slot, 8, slot_addr, &insn);
}

Test(slot, indirect_jmp_through_rip)
{
	const uint8_t code[] = {0xff, 0x25, 0x00, 0x02, 0, 0}; /* jmp [rip+0x200] */
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR), moved;
	uint8_t slot[DIS_SLOT_SIZE];
	uint64_t slot_addr = ADDR + 0x40000000, a, b;

	cr_assert(!dis_needs_emulation(&insn));
	cr_assert_gt(dis_build_slot(&insn, code, slot_addr, slot), 0);
	moved = decode_ok(slot, sizeof(slot), slot_addr);
	cr_expect_eq(moved.kind, DIS_INDIRECT);
	dis_effective_address(&insn, code, &regs, &a);
	dis_effective_address(&moved, slot, &regs, &b);
	cr_expect_eq(a, b);
}

Test(slot, plain_copy)
{
	const uint8_t code[] = {0xf0, 0x0f, 0xb1, 0x37}; /* lock cmpxchg [rdi], esi */
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR);
	uint8_t slot[DIS_SLOT_SIZE];
	uint64_t slot_addr = ADDR + 0x1000;

	cr_assert_eq(dis_build_slot(&insn, code, slot_addr, slot), 4 + 5);
	cr_expect_eq(memcmp(slot, code, 4), 0);
	expect_jmp_back(slot, 4, slot_addr, &insn);
}

static void check_jcc_slot(const uint8_t *code, size_t n, uint8_t opcode2)
{
	struct dis_insn insn = decode_ok(code, n, ADDR), moved;
	uint8_t slot[DIS_SLOT_SIZE];
	uint64_t slot_addr = ADDR + (1u << 20);

	cr_assert(!dis_needs_emulation(&insn));
	cr_assert_eq(dis_build_slot(&insn, code, slot_addr, slot), 6 + 5);
	cr_expect_eq(slot[0], 0x0f);
	cr_expect_eq(slot[1], opcode2);
	moved = decode_ok(slot, sizeof(slot), slot_addr);
	cr_expect_eq(moved.kind, DIS_JCC);
	cr_expect_eq(moved.len, 6);
	cr_expect_eq(moved.target, insn.target);
	expect_jmp_back(slot, 6, slot_addr, &insn);
}

Test(slot, jcc_rel8_becomes_rel32)
{
	const uint8_t jne[] = {0x75, 0x10};
	const uint8_t jl_back[] = {0x7c, 0x80};

	check_jcc_slot(jne, sizeof(jne), 0x85);
	check_jcc_slot(jl_back, sizeof(jl_back), 0x8c);
}

Test(slot, jcc_rel32_keeps_target)
{
	const uint8_t je[] = {0x0f, 0x84, 0x00, 0x01, 0, 0};

	check_jcc_slot(je, sizeof(je), 0x84);
}

Test(slot, out_of_range)
{
	const uint8_t load[] = {0x8b, 0x05, 0x10, 0, 0, 0};
	const uint8_t far_load[] = {0x8b, 0x05, 0xf0, 0xff, 0xff, 0x7f}; /* disp 0x7ffffff0 */
	const uint8_t jne[] = {0x75, 0x10};
	const uint8_t nop[] = {0x90};
	struct dis_insn insn;
	uint8_t slot[DIS_SLOT_SIZE];

	insn = decode_ok(load, sizeof(load), ADDR);
	cr_expect_eq(dis_build_slot(&insn, load, ADDR + (3ull << 30), slot), -1);
	cr_expect_eq(dis_build_slot(&insn, load, ADDR - (3ull << 30), slot), -1);
	/* in reach of the slot, but the rebased disp32 overflows */
	insn = decode_ok(far_load, sizeof(far_load), ADDR);
	cr_expect_eq(dis_build_slot(&insn, far_load, ADDR - (1u << 20), slot), -1);
	cr_expect_gt(dis_build_slot(&insn, far_load, ADDR + (1u << 20), slot), 0);
	insn = decode_ok(jne, sizeof(jne), ADDR);
	cr_expect_eq(dis_build_slot(&insn, jne, ADDR + (5ull << 30), slot), -1);
	/* the jmp back itself cannot reach */
	insn = decode_ok(nop, sizeof(nop), ADDR);
	cr_expect_eq(dis_build_slot(&insn, nop, ADDR + (1ull << 40), slot), -1);
}

Test(slot, emulated_kinds_refuse)
{
	const uint8_t codes[][6] = {
	    {0xe8, 0x10, 0, 0, 0},	 /* call */
	    {0xeb, 0x10},		 /* jmp */
	    {0xc3},			 /* ret */
	    {0xe3, 0x10},		 /* jrcxz: no rel32 form */
	    {0xe2, 0x10},		 /* loop */
	    {0xff, 0xd0},		 /* call rax: run from a slot, it would return there */
	    {0xff, 0x15, 0x10, 0, 0, 0}, /* call [rip + 0x10] */
	};
	uint8_t slot[DIS_SLOT_SIZE];

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		struct dis_insn insn = decode_ok(codes[i], sizeof(codes[i]), ADDR);

		cr_expect_eq(dis_build_slot(&insn, codes[i], ADDR + 0x1000, slot), -1, "%s",
			     insn.text);
		cr_expect(dis_needs_emulation(&insn), "%s", insn.text);
	}
}

/* --- emulation on a fake stack --- */

struct fake_mem {
	uint64_t base;
	uint64_t words[16];
	bool broken;
};

static uint64_t *fake_word(struct fake_mem *m, uint64_t addr)
{
	if (m->broken || addr < m->base || (addr - m->base) % 8 ||
	    (addr - m->base) / 8 >= sizeof(m->words) / 8)
		return NULL;
	return &m->words[(addr - m->base) / 8];
}

static int fake_peek(void *ctx, uint64_t addr, uint64_t *value)
{
	uint64_t *w = fake_word(ctx, addr);

	if (!w)
		return -1;
	*value = *w;
	return 0;
}

static int fake_poke(void *ctx, uint64_t addr, uint64_t value)
{
	uint64_t *w = fake_word(ctx, addr);

	if (!w)
		return -1;
	*w = value;
	return 0;
}

#define STACK 0x7ffe0000ull /* test_regs().rsp */

static struct fake_mem fake_stack(void)
{
	struct fake_mem m = {.base = STACK - 64};

	return m;
}

Test(emulate, call)
{
	const uint8_t code[] = {0xe8, 0x10, 0, 0, 0};
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR);
	struct user_regs_struct regs = test_regs();
	struct fake_mem m = fake_stack();

	cr_assert_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), 0);
	cr_expect_eq(regs.rip, ADDR + 5 + 0x10);
	cr_expect_eq(regs.rsp, STACK - 8);
	cr_expect_eq(m.words[7], ADDR + 5);
}

/* An indirect call pushes the instruction's own return address, and goes
 * where the register, or the memory as it was before the push, says. */
Test(emulate, indirect_call)
{
	const uint8_t by_reg[] = {0xff, 0xd0};		     /* call rax */
	const uint8_t by_stack[] = {0xff, 0x54, 0x24, 0x08}; /* call [rsp + 8] */
	struct dis_insn insn = decode_ok(by_reg, sizeof(by_reg), ADDR);
	struct user_regs_struct regs = test_regs();
	struct fake_mem m = fake_stack();

	regs.rax = 0x401000;
	cr_assert_eq(dis_emulate(&insn, by_reg, &regs, fake_peek, fake_poke, &m), 0);
	cr_expect_eq(regs.rip, 0x401000);
	cr_expect_eq(regs.rsp, STACK - 8);
	cr_expect_eq(m.words[7], ADDR + 2);

	insn = decode_ok(by_stack, sizeof(by_stack), ADDR);
	regs = test_regs();
	regs.rsp = STACK - 16;
	m.words[7] = 0x402000; /* [rsp + 8] before the push */
	cr_assert_eq(dis_emulate(&insn, by_stack, &regs, fake_peek, fake_poke, &m), 0);
	cr_expect_eq(regs.rip, 0x402000);
	cr_expect_eq(regs.rsp, STACK - 24);
	cr_expect_eq(m.words[5], ADDR + 4);
	cr_expect_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), -1,
		     "without its bytes, its operand is unknown");
}

Test(emulate, ret)
{
	const uint8_t code[] = {0xc3};
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR);
	struct user_regs_struct regs = test_regs();
	struct fake_mem m = fake_stack();

	regs.rsp = STACK - 8;
	m.words[7] = 0x401234;
	cr_assert_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), 0);
	cr_expect_eq(regs.rip, 0x401234);
	cr_expect_eq(regs.rsp, STACK);
}

Test(emulate, ret_imm16)
{
	const uint8_t ret8[] = {0xc2, 0x08, 0x00};
	const uint8_t ret16[] = {0xc2, 0x10, 0x00}; /* printed as "ret 0x10" */
	struct user_regs_struct regs = test_regs();
	struct fake_mem m = fake_stack();
	struct dis_insn insn = decode_ok(ret8, sizeof(ret8), ADDR);

	m.words[8] = 0x405678; /* at STACK */
	cr_assert_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), 0);
	cr_expect_eq(regs.rip, 0x405678);
	cr_expect_eq(regs.rsp, STACK + 16);
	regs = test_regs();
	insn = decode_ok(ret16, sizeof(ret16), ADDR);
	cr_assert_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), 0);
	cr_expect_eq(regs.rsp, STACK + 8 + 16);
}

Test(emulate, jmp)
{
	const uint8_t code[] = {0xeb, 0xfe};
	struct dis_insn insn = decode_ok(code, sizeof(code), ADDR);
	struct user_regs_struct regs = test_regs();

	regs.rip = 0;
	cr_assert_eq(dis_emulate(&insn, NULL, &regs, NULL, NULL, NULL), 0);
	cr_expect_eq(regs.rip, ADDR);
	cr_expect_eq(regs.rsp, STACK);
}

Test(emulate, failure_leaves_regs)
{
	const uint8_t call[] = {0xe8, 0x10, 0, 0, 0};
	const uint8_t ret[] = {0xc3};
	const uint8_t nop[] = {0x90};
	struct user_regs_struct regs = test_regs(), before = regs;
	struct fake_mem m = fake_stack();
	struct dis_insn insn;

	m.broken = true;
	insn = decode_ok(call, sizeof(call), ADDR);
	cr_expect_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), -1);
	insn = decode_ok(ret, sizeof(ret), ADDR);
	cr_expect_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), -1);
	m.broken = false;
	insn = decode_ok(nop, sizeof(nop), ADDR);
	cr_expect_eq(dis_emulate(&insn, NULL, &regs, fake_peek, fake_poke, &m), -1);
	cr_expect_eq(memcmp(&regs, &before, sizeof(regs)), 0);
}

static uint64_t emulate_branch(const uint8_t *code, size_t n, uint64_t eflags, uint64_t *rcx)
{
	struct dis_insn insn = decode_ok(code, n, ADDR);
	struct user_regs_struct regs = test_regs();

	regs.eflags = eflags;
	regs.rcx = *rcx;
	cr_assert_eq(dis_emulate(&insn, NULL, &regs, NULL, NULL, NULL), 0, "%s", insn.text);
	*rcx = regs.rcx;
	return regs.rip;
}

Test(emulate, conditional)
{
	const uint8_t jne[] = {0x75, 0x10}, jl[] = {0x7c, 0x10}, loop[] = {0xe2, 0x10};
	const uint8_t jrcxz[] = {0xe3, 0x10}, ja32[] = {0x0f, 0x87, 0x00, 0x01, 0, 0};
	const uint64_t zf = 0x40, sf = 0x80, of = 0x800, cf = 0x1;
	uint64_t rcx = 0;

	cr_expect_eq(emulate_branch(jne, 2, zf, &rcx), ADDR + 2);
	cr_expect_eq(emulate_branch(jne, 2, 0, &rcx), ADDR + 2 + 0x10);
	cr_expect_eq(emulate_branch(jl, 2, sf, &rcx), ADDR + 2 + 0x10);
	cr_expect_eq(emulate_branch(jl, 2, sf | of, &rcx), ADDR + 2);
	cr_expect_eq(emulate_branch(ja32, 6, 0, &rcx), ADDR + 6 + 0x100);
	cr_expect_eq(emulate_branch(ja32, 6, cf, &rcx), ADDR + 6);
	cr_expect_eq(emulate_branch(jrcxz, 2, 0, &rcx), ADDR + 2 + 0x10);
	rcx = 2;
	cr_expect_eq(emulate_branch(loop, 2, 0, &rcx), ADDR + 2 + 0x10);
	cr_expect_eq(rcx, 1);
	cr_expect_eq(emulate_branch(loop, 2, 0, &rcx), ADDR + 2);
	cr_expect_eq(rcx, 0);
	cr_expect_eq(emulate_branch(jrcxz, 2, 0, &rcx), ADDR + 2 + 0x10);
}

/* --- which instruction did a watchpoint catch --- */

#define PC 0x402000ull

Test(access_before, rip_relative_load)
{
	/* push rbp; mov rax, [rip+0x1000] | pc */
	const uint8_t win[] = {0x55, 0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00};
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	cr_assert_eq(dis_access_before(win, sizeof(win), PC, &regs, PC + 0x1000, 1, &insn, &access),
		     DIS_MATCH_EXACT);
	cr_expect_eq(insn.len, 7);
	cr_expect_eq(insn.addr, PC - 7);
	cr_expect_eq(access, DIS_READ);
	cr_expect_str_eq(insn.text, "mov rax, qword ptr [rip + 0x1000]");
}

Test(access_before, read_modify_write)
{
	/* mov rax, [rip+0x1000]; add [rdi], eax | pc */
	const uint8_t win[] = {0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x01, 0x07};
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	cr_assert_geq(dis_access_before(win, sizeof(win), PC, &regs, regs.rdi, 1, &insn, &access),
		      0);
	cr_expect_eq(insn.len, 2);
	cr_expect_eq(access, DIS_READ | DIS_WRITE);
}

Test(access_before, address_decides_between_candidates)
{
	/* mov eax, [rdi+0] (8B 87 disp32=0) ends in 00 00, which on its own
	 * is add [rax], al: both end at pc, the registers pick one */
	const uint8_t win[] = {0x90, 0x8b, 0x87, 0x00, 0x00, 0x00, 0x00};
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	cr_assert_geq(dis_access_before(win, sizeof(win), PC, &regs, regs.rdi, 1, &insn, &access),
		      0);
	cr_expect_eq(insn.len, 6);
	cr_expect_eq(access, DIS_READ);
	cr_assert_geq(dis_access_before(win, sizeof(win), PC, &regs, regs.rax, 1, &insn, &access),
		      0);
	cr_expect_eq(insn.len, 2);
	cr_expect_eq(access, DIS_READ | DIS_WRITE);
	/* neither operand matches: the longest candidate */
	cr_assert_eq(dis_access_before(win, sizeof(win), PC, &regs, 0x1234, 1, &insn, &access),
		     DIS_MATCH_OTHER);
	cr_expect_eq(insn.len, 6);
}

Test(access_before, store_inside_watched_word)
{
	/* mov byte [rdi+3], cl (88 4F 03) inside an 8-byte watch at rdi */
	const uint8_t win[] = {0x88, 0x4f, 0x03};
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	cr_assert_eq(dis_access_before(win, sizeof(win), PC, &regs, regs.rdi, 8, &insn, &access),
		     DIS_MATCH_COVERS);
	cr_expect_eq(insn.len, 3);
	cr_expect_eq(access, DIS_WRITE);
}

Test(access_before, long_window)
{
	uint8_t win[40];
	const uint8_t store[] = {0x89, 0x0d, 0x00, 0x01, 0x00, 0x00}; /* mov [rip+0x100], ecx */
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	memset(win, 0x90, sizeof(win));
	memcpy(win + sizeof(win) - sizeof(store), store, sizeof(store));
	cr_assert_geq(dis_access_before(win, sizeof(win), PC, &regs, PC + 0x100, 1, &insn, &access),
		      0);
	cr_expect_eq(insn.len, 6);
	cr_expect_eq(access, DIS_WRITE);
}

Test(access_before, no_memory_instruction)
{
	const uint8_t win[] = {0x90, 0x90, 0x48, 0x89, 0xc7}; /* nop; nop; mov rdi, rax */
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	cr_expect_eq(dis_access_before(win, sizeof(win), PC, &regs, regs.rdi, 1, &insn, &access),
		     -1);
	cr_expect_eq(dis_access_before(win, 0, PC, &regs, regs.rdi, 1, &insn, &access), -1);
}

/* Accesses no operand names, with the registers after the instruction:
 * push's slot is at rsp; a rep stos's last element behind rdi, at its end
 * or in the middle of its run; bts's bit string element; maskmovdqu's
 * store through rdi; fxsave's 512 bytes. */
Test(access_before, implicit_and_odd_accesses)
{
	const uint8_t push[] = {0x50}, stos[] = {0xf3, 0xaa}, bts[] = {0x48, 0x0f, 0xab, 0x07};
	const uint8_t maskmov[] = {0x66, 0x0f, 0xf7, 0xc1}, fxsave[] = {0x0f, 0xae, 0x07};
	struct user_regs_struct regs = test_regs();
	struct dis_insn insn;
	unsigned access = 0;

	cr_expect_eq(dis_access_before(push, sizeof(push), PC, &regs, regs.rsp, 8, &insn, &access),
		     DIS_MATCH_EXACT);
	cr_expect_eq(access, DIS_WRITE);
	cr_expect_eq(
	    dis_access_before(stos, sizeof(stos), PC, &regs, regs.rdi - 1, 1, &insn, &access),
	    DIS_MATCH_EXACT);
	cr_expect_eq(access, DIS_WRITE);
	cr_expect_eq(
	    dis_string_in_progress(stos, sizeof(stos), PC, &regs, regs.rdi - 1, 1, &insn, &access),
	    DIS_MATCH_EXACT);
	cr_expect_eq(insn.addr, PC);
	cr_expect_eq(
	    dis_string_in_progress(stos, sizeof(stos), PC, &regs, regs.rdi + 8, 1, &insn, &access),
	    -1);
	cr_expect_eq(
	    dis_string_in_progress(fxsave, sizeof(fxsave), PC, &regs, regs.rdi, 1, &insn, &access),
	    -1);
	regs.rax = 70; /* bit 70 of [rdi] is bit 6 of [rdi + 8] */
	cr_expect_eq(
	    dis_access_before(bts, sizeof(bts), PC, &regs, regs.rdi + 8, 8, &insn, &access),
	    DIS_MATCH_EXACT);
	cr_expect_eq(dis_access_before(bts, sizeof(bts), PC, &regs, regs.rdi, 8, &insn, &access),
		     DIS_MATCH_OTHER);
	regs.rax = (uint64_t)-1; /* bit -1: the word before */
	cr_expect_eq(
	    dis_access_before(bts, sizeof(bts), PC, &regs, regs.rdi - 8, 8, &insn, &access),
	    DIS_MATCH_EXACT);
	cr_expect_eq(
	    dis_access_before(maskmov, sizeof(maskmov), PC, &regs, regs.rdi + 4, 4, &insn, &access),
	    DIS_MATCH_COVERS);
	cr_expect_eq(access, DIS_WRITE);
	cr_expect_eq(
	    dis_access_before(fxsave, sizeof(fxsave), PC, &regs, regs.rdi + 500, 1, &insn, &access),
	    DIS_MATCH_COVERS);
	cr_expect_eq(access, DIS_WRITE);
}

/* Masked stores write their memory operand (capstone says they read it);
 * the masked loads read it. */
Test(decode, masked_stores_write)
{
	const uint8_t store[] = {0xc4, 0xe2, 0x75, 0x8e, 0x07}; /* vpmaskmovd [rdi], ymm1, ymm0 */
	const uint8_t load[] = {0xc4, 0xe2, 0x75, 0x8c, 0x07};	/* vpmaskmovd ymm0, ymm1, [rdi] */
	struct dis_insn insn;

	cr_assert_eq(dis_decode(store, sizeof(store), PC, &insn), 0);
	cr_expect_eq(insn.mem_access, DIS_WRITE, "%s", insn.text);
	cr_assert_eq(dis_decode(load, sizeof(load), PC, &insn), 0);
	cr_expect_eq(insn.mem_access, DIS_READ, "%s", insn.text);
}

/* --- executing relocated slots in this process --- */

struct pages {
	uint8_t *orig; /* where the instruction "lives" */
	uint8_t *slot; /* where it runs */
	size_t size;
};

static bool map_pages(struct pages *p)
{
	p->size = (size_t)sysconf(_SC_PAGESIZE);
	p->orig = mmap(NULL, 2 * p->size, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->orig == MAP_FAILED)
		return false;
	p->slot = p->orig + p->size;
	memset(p->orig, 0xcc, 2 * p->size); /* int3 everywhere not written */
	return true;
}

static void unmap_pages(struct pages *p)
{
	munmap(p->orig, 2 * p->size);
}

/* Copies insn bytes to orig + off and builds its slot at slot + slot_off. */
static void place(struct pages *p, size_t off, const uint8_t *code, size_t n, size_t slot_off)
{
	struct dis_insn insn;
	uint8_t out[DIS_SLOT_SIZE];
	int len;

	memcpy(p->orig + off, code, n);
	cr_assert_eq(dis_decode(p->orig + off, n, (uint64_t)(p->orig + off), &insn), 0);
	len = dis_build_slot(&insn, p->orig + off, (uint64_t)(p->slot + slot_off), out);
	cr_assert_gt(len, 0);
	memcpy(p->slot + slot_off, out, (size_t)len);
}

Test(execute, rip_relative_load_and_store)
{
	/* orig+0:  mov rax, [rip+0x7f9]  -> orig+0x800
	 * orig+7:  ret
	 * orig+16: mov [rip+0x7e9], rdi -> orig+0x800
	 * orig+23: ret
	 * Calling a slot runs the moved instruction, jumps back to the ret. */
	const uint8_t load[] = {0x48, 0x8b, 0x05, 0xf9, 0x07, 0x00, 0x00};
	const uint8_t store[] = {0x48, 0x89, 0x3d, 0xe9, 0x07, 0x00, 0x00};
	struct pages p;
	uint64_t value = 0x1122334455667788ull, got;

	if (!map_pages(&p))
		cr_skip_test("no RWX mapping");
	place(&p, 0, load, sizeof(load), 0);
	p.orig[7] = 0xc3;
	place(&p, 16, store, sizeof(store), 64);
	p.orig[23] = 0xc3;
	memcpy(p.orig + 0x800, &value, sizeof(value));

	got = ((uint64_t(*)(void))(void *)p.slot)();
	cr_expect_eq(got, value, "%#lx", (unsigned long)got);
	((void (*)(uint64_t))(void *)(p.slot + 64))(0xabcdefull);
	memcpy(&got, p.orig + 0x800, sizeof(got));
	cr_expect_eq(got, 0xabcdefull);
	unmap_pages(&p);
}

Test(execute, relocated_jcc)
{
	/* orig+0x00: test rdi, rdi; jmp slot        (entry)
	 * orig+0x10: jne +0x0e (the instruction that is moved)
	 * orig+0x12: xor eax, eax; ret              (fall through)
	 * orig+0x20: mov eax, 1; ret                (taken) */
	const uint8_t entry[] = {0x48, 0x85, 0xff, 0xe9};
	const uint8_t jne[] = {0x75, 0x0e};
	const uint8_t fall[] = {0x31, 0xc0, 0xc3};
	const uint8_t taken[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
	struct pages p;
	int32_t rel;
	int (*fn)(long);

	if (!map_pages(&p))
		cr_skip_test("no RWX mapping");
	memcpy(p.orig, entry, sizeof(entry));
	rel = (int32_t)(p.slot - (p.orig + 8));
	memcpy(p.orig + 4, &rel, sizeof(rel));
	place(&p, 0x10, jne, sizeof(jne), 0);
	memcpy(p.orig + 0x12, fall, sizeof(fall));
	memcpy(p.orig + 0x20, taken, sizeof(taken));

	fn = (int (*)(long))(void *)p.orig;
	cr_expect_eq(fn(5), 1);
	cr_expect_eq(fn(0), 0);
	unmap_pages(&p);
}
