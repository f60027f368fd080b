/* serve.h — `btrfslab serve`: the companion the page asks the kernel through. */
#ifndef BTRFSLAB_CLI_SERVE_H
#define BTRFSLAB_CLI_SERVE_H

/* The command: argv[0] is "serve". Returns the exit status. */
int cmd_serve(int argc, char **argv, int variant);
#endif
