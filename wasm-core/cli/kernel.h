/* kernel.h — `btrfslab kernel IMAGE`: the real kernel's view of an image. */
#ifndef BTRFSLAB_CLI_KERNEL_H
#define BTRFSLAB_CLI_KERNEL_H

/* The command: argv[0] is "kernel". Returns the exit status. */
int cmd_kernel(int argc, char **argv, int variant);
#endif
