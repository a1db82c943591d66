#!/usr/bin/env bash
# Builds the package's C# with Debian's Mono (no Unity needed) into OUT_DIR:
#   Rcadia.Agent.dll          the core (Runtime/ without Runtime/Unity/), as Unity compiles it
#   Rcadia.Agent.Tests.dll    the NUnit tests (Tests/Editor/ and the Mono-only Tests/Mono~/),
#                             run with: nunit-console OUT_DIR/Rcadia.Agent.Tests.dll
#   ConformanceDriver.exe     the C# side of the conformance test (Tests/Node~/)
# and compiles the Unity glue and the sample's MonoBehaviour against UnityEngineStub.cs,
# once with a WebGL player's defines and once with the Editor's. That checks our C#, not
# Unity's API: the stub declares only what we believe Unity has.
#
# mcs is held to C# 6 (-langversion:6) and warnings are errors.
# Usage: build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pkg="$(cd "$here/../.." && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"

for tool in mcs; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "build.sh: $tool is missing: install Debian's mono-devel (ops/test does)" >&2
        exit 2
    }
done
nunit=""
for candidate in /usr/lib/cli/nunit.framework-2.6*/nunit.framework.dll; do
    [ -f "$candidate" ] && nunit="$candidate"
done
if [ -z "$nunit" ]; then
    echo "build.sh: nunit.framework.dll (NUnit 2.6) is missing: install Debian's libnunit-cil-dev (ops/test does)" >&2
    exit 2
fi

flags=(-nologo -langversion:6 -warnaserror+ -debug -sdk:4.5 -r:System.Numerics)
mapfile -t core < <(find "$pkg/Runtime" -name '*.cs' -not -path '*/Runtime/Unity/*' | sort)
sample_pure=("$pkg/Samples~/TicTacToe/TicTacToeRules.cs" "$pkg/Samples~/TicTacToe/TicTacToeTable.cs")
mapfile -t tests < <(find "$pkg/Tests/Editor" "$here" -name '*Tests.cs' | sort)

mcs "${flags[@]}" -target:library -out:"$out/Rcadia.Agent.dll" "${core[@]}"
mcs "${flags[@]}" -target:library -out:"$out/Rcadia.Agent.Tests.dll" \
    -r:"$out/Rcadia.Agent.dll" -r:"$nunit" \
    "${tests[@]}" "$pkg/Tests/Editor/FakeHostLink.cs" "${sample_pure[@]}"
mcs "${flags[@]}" -target:exe -out:"$out/ConformanceDriver.exe" \
    -r:"$out/Rcadia.Agent.dll" "$here/ConformanceDriver.cs"

glue=("$pkg/Runtime/Unity/RcadiaWebGLLink.cs" "$pkg/Samples~/TicTacToe/TicTacToeBehaviour.cs" "${sample_pure[@]}")
mcs "${flags[@]}" -target:library -out:"$out/UnityGlue.WebGL.dll" -define:UNITY_5_3_OR_NEWER -define:UNITY_WEBGL \
    -r:"$out/Rcadia.Agent.dll" "$here/UnityEngineStub.cs" "${glue[@]}"
mcs "${flags[@]}" -target:library -out:"$out/UnityGlue.Editor.dll" -define:UNITY_5_3_OR_NEWER -define:UNITY_EDITOR \
    -r:"$out/Rcadia.Agent.dll" "$here/UnityEngineStub.cs" "${glue[@]}"

echo "build.sh: built $out/Rcadia.Agent.dll, Rcadia.Agent.Tests.dll, ConformanceDriver.exe; the Unity glue compiles against the stub"
