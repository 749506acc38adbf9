/*
 * oracle_state.h: the oracle's state, shared by oracle.c (the trace-driven
 * strategies: dfs, bfs, cb, vb) and priority.c (the priority schedulers:
 * pct, pctvb and vb's thread-bounding permutations).  Internal to the two;
 * everything else goes through oracle.h.
 */
#ifndef CCTRACE_POLICY_ORACLE_STATE_H
#define CCTRACE_POLICY_ORACLE_STATE_H

#include "policy/oracle.h"

#define MAX_VARS    64 /* vb, pctvb: variable sets are bit sets (oracle_check) */
#define MAX_CHANGES 16

struct entry {
	int k, n;
	int abs;	   /* the option actually returned (k is relative for cb/vb) */
	int cum;	   /* cb, vb: preemptions including this choice */
	bool can_continue; /* cb: the thread that ran last is option 0; any other
			    * option preempts it */
	bool forced;	   /* vb: no preemption allowed here: only option 0 */
};

struct prefix {
	int *k;
	int len;
};

struct oracle {
	struct oracle_config cfg;
	struct entry *trace;
	int len, cap;
	int replay_len; /* entries to replay at the start of the run */
	int index;	/* next entry to use */
	bool diverged;
	bool abandoned;
	/* bfs */
	struct prefix *queue;
	int qhead, qlen, qcap;
	/* random, pct, pctvb, vb thread bounding */
	uint64_t rng;
	long run;
	int max_points;		     /* pct: most choice points seen in a run */
	int change[MAX_CHANGES];     /* pct: choice-point numbers where priorities drop */
	int change_var[MAX_CHANGES]; /* pctvb: the variable of each change point */
	int nchange;
	/* pct, pctvb, vb:V:T: priority of each option identity (a thread
	 * variable, or a value's index); grows on demand, the first nprio set
	 * for this run (priority.c, prio_slot) */
	int *prio;
	int nprio, prio_cap;
	int prio_spare;	       /* stands in for a slot that could not be had */
	int nvars;	       /* vb, pctvb: watched variables of the schedule */
	uint64_t subset;       /* vb, pctvb: the variables preemptions may follow */
	int acc_run[MAX_VARS]; /* pctvb: choice points after an access, this run */
	int acc_max[MAX_VARS]; /* pctvb: the most in any run so far (k_q of 004) */
	/* vb:V:T thread bounding: a permutation of tb_n thread priorities and
	 * one priority per preemption (004, section 4) */
	int tb_n;     /* threads the permutations are over */
	int tb_seen;  /* 1 + the largest thread id seen so far */
	int *tb_rank; /* [tb_n + preemptions] */
	int tb_rank_cap;
	long tb_perm;	   /* index of the current permutation in this set */
	uint64_t *tb_used; /* hashes of the permutations drawn for this set */
	long tb_nused, tb_capused;
	double estimate_sum; /* sum over runs of the product of options */
	long estimate_runs;
};

/* priority.c */
uint64_t oracle_random(struct oracle *o);
int oracle_below(struct oracle *o, int n);
bool oracle_var_in_subset(const struct oracle *o, uint64_t subset, int var);
void pct_plan(struct oracle *o);
int pct_choose(struct oracle *o, int n, const int *ids);
void pctvb_plan(struct oracle *o);
int pctvb_choose(struct oracle *o, int n, const int *ids, int current, int current_var);
void pctvb_learn(struct oracle *o);
/* vb:V:T: start the variable set's permutations, or go to the next one
 * (false when the set has none left for this shard); the option the priorities run, with the
 * thread `lowered` (an id, -1 for none) given the priority of preemption
 * number `nth`; and the priority change of a preemption. */
bool tb_first_permutation(struct oracle *o);
bool tb_next_permutation(struct oracle *o);
void tb_start_run(struct oracle *o);
int tb_highest(struct oracle *o, int n, const int *ids, int lowered, int nth);
void tb_preempt(struct oracle *o, int id, int nth);
long tb_permutations(const struct oracle *o);

#endif
