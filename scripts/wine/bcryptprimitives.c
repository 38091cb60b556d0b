/*
 * bcryptprimitives.dll for the private Wine prefix that runs pikit's Windows
 * test binaries (scripts/test-windows). Built by scripts/install-test-deps
 * with Debian's gcc-mingw-w64-x86-64-win32 and copied into the prefix's
 * system32; never shipped, never used on real Windows.
 *
 * It closes two gaps of Debian 12's Wine 8.0 that Go 1.26 programs hit:
 *
 * 1. Go's Windows runtime takes its randomness from ProcessPrng in
 *    bcryptprimitives.dll, loaded from system32 before main. Wine 8.0 has no
 *    such DLL, so every Go binary dies at start with "bcryptprimitives.dll not
 *    found". ProcessPrng below fills the buffer with advapi32's
 *    SystemFunction036 (RtlGenRandom), which Wine has.
 *
 * 2. Go's os.RemoveAll deletes with NtSetInformationFile and the class
 *    FileDispositionInformationEx (64, POSIX delete semantics), and falls back
 *    to the classic FileDispositionInformation only when the call answers
 *    STATUS_INVALID_INFO_CLASS, as Windows before 10 1607 does. Wine 8.0
 *    answers STATUS_NOT_IMPLEMENTED instead, so RemoveAll of any non-empty
 *    directory (every t.TempDir cleanup) fails with "Invalid function". When
 *    the DLL is loaded (Go loads it first thing), it points ntdll's export of
 *    NtSetInformationFile at a wrapper that turns exactly that answer for
 *    exactly that class into STATUS_INVALID_INFO_CLASS, so Go takes its own
 *    documented fallback. A Wine that implements the class is left alone.
 */
#include <windows.h>
#include <winternl.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* ProcessPrng fills data with size random bytes. Windows documents it as
 * always returning TRUE; this one returns FALSE if RtlGenRandom fails, which
 * makes Go's runtime throw rather than run on unfilled bytes. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}

#define FILE_DISPOSITION_INFORMATION_EX_CLASS 64
#define STATUS_NOT_IMPLEMENTED_ ((NTSTATUS)0xC0000002)
#define STATUS_INVALID_INFO_CLASS_ ((NTSTATUS)0xC0000003)

typedef NTSTATUS(WINAPI *set_information_file_fn)(HANDLE, PVOID, PVOID, ULONG, ULONG);
static set_information_file_fn real_set_information_file;

static NTSTATUS WINAPI set_information_file(HANDLE file, PVOID io, PVOID info, ULONG length, ULONG class)
{
	NTSTATUS status = real_set_information_file(file, io, info, length, class);
	if (class == FILE_DISPOSITION_INFORMATION_EX_CLASS && status == STATUS_NOT_IMPLEMENTED_)
		return STATUS_INVALID_INFO_CLASS_;
	return status;
}

/* near_stub allocates, at most 4 GiB above base (an export address is a
 * 32-bit offset from the module's base), 12 bytes of code that jump to
 * target: mov rax, target; jmp rax. */
static BYTE *near_stub(BYTE *base, SIZE_T image_size, void *target)
{
	ULONG_PTR start = ((ULONG_PTR)base + image_size + 0xFFFF) & ~(ULONG_PTR)0xFFFF;
	for (ULONG_PTR at = start; at - (ULONG_PTR)base < 0xFFFF0000UL; at += 0x10000) {
		BYTE *p = VirtualAlloc((void *)at, 4096, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
		if (!p)
			continue;
		if ((ULONG_PTR)p - (ULONG_PTR)base >= 0xFFFF0000UL) {
			VirtualFree(p, 0, MEM_RELEASE);
			return NULL;
		}
		ULONG_PTR t = (ULONG_PTR)target;
		p[0] = 0x48, p[1] = 0xB8; /* mov rax, imm64 */
		for (int i = 0; i < 8; i++)
			p[2 + i] = (BYTE)(t >> (8 * i));
		p[10] = 0xFF, p[11] = 0xE0; /* jmp rax */
		DWORD old;
		if (!VirtualProtect(p, 4096, PAGE_EXECUTE_READ, &old)) {
			VirtualFree(p, 0, MEM_RELEASE);
			return NULL;
		}
		FlushInstructionCache(GetCurrentProcess(), p, 12);
		return p;
	}
	return NULL;
}

/* wrap_set_information_file points ntdll's export NtSetInformationFile at
 * set_information_file; on any failure it leaves ntdll as it was. */
static void wrap_set_information_file(void)
{
	BYTE *base = (BYTE *)GetModuleHandleW(L"ntdll.dll");
	if (!base)
		return;
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(base + ((IMAGE_DOS_HEADER *)base)->e_lfanew);
	IMAGE_DATA_DIRECTORY dir = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
	if (dir.Size == 0)
		return;
	IMAGE_EXPORT_DIRECTORY *exp = (IMAGE_EXPORT_DIRECTORY *)(base + dir.VirtualAddress);
	DWORD *names = (DWORD *)(base + exp->AddressOfNames);
	WORD *ordinals = (WORD *)(base + exp->AddressOfNameOrdinals);
	DWORD *functions = (DWORD *)(base + exp->AddressOfFunctions);
	for (DWORD i = 0; i < exp->NumberOfNames; i++) {
		if (lstrcmpA((const char *)(base + names[i]), "NtSetInformationFile") != 0)
			continue;
		DWORD *slot = &functions[ordinals[i]];
		real_set_information_file = (set_information_file_fn)(void *)(base + *slot);
		BYTE *stub = near_stub(base, nt->OptionalHeader.SizeOfImage, (void *)set_information_file);
		DWORD old;
		if (!stub || !VirtualProtect(slot, sizeof *slot, PAGE_READWRITE, &old))
			return;
		*slot = (DWORD)(stub - base);
		VirtualProtect(slot, sizeof *slot, old, &old);
		return;
	}
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
	(void)instance;
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH)
		wrap_set_information_file();
	return TRUE;
}
