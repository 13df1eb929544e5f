/* host_io.c — fw.h on the host (stdio), for the host build of a firmware
 * test program: the reference its board output is compared with. */
#include <stdio.h>
#include <stdlib.h>

#include "fw.h"

void fw_puts(const char *s)
{
    fputs(s, stdout);
}

uint32_t fw_stack_used(void)
{
    return 0;
}

void fw_exit(int status)
{
    fflush(stdout);
    exit(status == 0 ? 0 : 1);
}
