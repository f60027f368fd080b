/* scenario-table.h — the scenario language's commands and settings as data:
 * a name, its arguments and one line on what it does. The parser's own
 * messages list them from here (scenario.c), `btrfslab help scenario --json`
 * prints them, and docs/scenario.md is generated from that output
 * (scripts/gen-docs.mjs), so the reference and the parser cannot drift:
 * tests/cli/docs.test.mjs runs every command and setting listed here and
 * looks for every name scenario.c compares against. */
#ifndef BTRFSLAB_SCENARIO_TABLE_H
#define BTRFSLAB_SCENARIO_TABLE_H

/* Where a command may stand. */
enum scenario_cmd_where {
	SCENARIO_FIRST,  /* only as the first line */
	SCENARIO_SCRIPT, /* a line of its own, not inside a thread */
	SCENARIO_BOTH,   /* a line of its own, or a thread's command */
};

struct scenario_doc {
	const char *name;
	const char *args; /* as a user writes them: PATH, SIZE, a|b, [optional] */
	const char *what; /* one line */
	int where;        /* commands: enum scenario_cmd_where */
};

/* Both end with an entry whose name is NULL. */
extern const struct scenario_doc scenario_commands[];
extern const struct scenario_doc scenario_settings[];

/* The names for a message: "mkfs mkdir ..." and "dir_logging, drop_batch, ..." (static storage). */
const char *scenario_command_names(void);
const char *scenario_setting_names(void);
/* Both tables as JSON, {"commands":[{"name","args","what","where"}],"settings":[{"name","args","what"}]}
 * (malloc'd; NULL when out of memory). */
char *scenario_table_json(void);

#endif
