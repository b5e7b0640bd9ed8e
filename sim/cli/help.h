/* help.h - the help texts of the command line. */
#ifndef LOCKLAB_HELP_H
#define LOCKLAB_HELP_H

#include <stddef.h>
#include <stdio.h>

/* The commands with a line each, and the exit codes. */
void help_overview(FILE *f);
/* One command's usage, options and example; -1 if name is no command. */
int help_command(FILE *f, const char *name);
/* The i-th command's name, NULL past the last (for suggestions). */
const char *help_command_name(size_t i);

#endif
