# scripts/wine/env.sh: sourced by scripts/install-test-deps and
# scripts/test-windows; needs $root (the checkout). Names the Wine of Debian's
# wine64 package and the checkout's private, git-ignored prefix, and exports
# the environment every Wine command of ours runs with: a 64-bit prefix, no
# debug chatter, no Mono/Gecko installer (the tests need neither), and no X
# display (CI has none; Go test binaries open no window).
wine_dir="$root/.cache/wine"
wine64=/usr/lib/wine/wine64       # Debian's wine64 package; /usr/bin/wine needs the "wine" package
wineserver=/usr/lib/wine/wineserver
wine_dll_src="$root/scripts/wine/bcryptprimitives.c"
wine_dll="$wine_dir/bcryptprimitives.dll"
export WINEPREFIX="$wine_dir/prefix"
export WINEARCH=win64
export WINEDEBUG=-all
export WINEDLLOVERRIDES='mscoree,mshtml='
unset DISPLAY WAYLAND_DISPLAY
wine_system32="$WINEPREFIX/drive_c/windows/system32"
