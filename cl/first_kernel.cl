/* Each device's first kernel at engine open (host/runtime/first_kernel.c):
   one work-item writes a known word, read back within a time limit. With
   `hang` set (a test hook, TANDEM_TEST_HANG) it then waits for a word that
   nobody writes: a device that never finishes, on purpose. The reads are
   volatile, so the loop is not assumed to end. */
__kernel void tdm_first_kernel(__global volatile uint *out, uint hang)
{
    out[0] = 0x74646d31u; /* "tdm1" */
    if (hang)
        while (out[0] != 0u)
            ;
}
