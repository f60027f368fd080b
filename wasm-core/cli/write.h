/* write.h — `btrfslab write IMAGE DEVICE`: an image onto a device, carefully. */
#ifndef BTRFSLAB_CLI_WRITE_H
#define BTRFSLAB_CLI_WRITE_H

/* The command: argv[0] is "write". Returns the exit status. */
int cmd_write(int argc, char **argv, int variant);
#endif
