/* Test harness only: Wine 8.0 lacks bcryptprimitives.dll!ProcessPrng, which the Bun runtime imports. */
#include <windows.h>
#include <ntsecapi.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!RtlGenRandom(data, n)) return FALSE;
    data += n; len -= n;
  }
  return TRUE;
}
