# Writes docs/Passes.md from the reference mlir-tblgen generates for each pass
# group, in the order a step goes through them. Run by recast-doc-sync:
#   cmake -DDOCS_DIR=<build>/docs -DOUTPUT=<source>/docs/Passes.md -P PassesDoc.cmake
set(groups
  "Training|RecastTrainingPasses|include/recast/Transforms/Training/Passes.td"
  "Mixed precision|RecastMixedPrecisionPasses|include/recast/Transforms/MixedPrecision/Passes.td"
  "Rematerialization|RecastRematPasses|include/recast/Transforms/Remat/Passes.td"
  "Memory|RecastMemoryPasses|include/recast/Transforms/Memory/Passes.td"
  "Lowering to the CPU and the GPU|RecastConversionPasses|include/recast/Conversion/Passes.td")
set(text "<!-- Generated from the Passes.td files by `recast-doc-sync`; don't edit -->\n\n")
string(APPEND text "# recast passes\n\n")
string(APPEND text "Every pass recast registers, by group, each group from its own\n")
string(APPEND text "`Passes.td`. `recast-opt --list-recast-passes` lists them with their\n")
string(APPEND text "summaries; `--recast-train-pipeline`, `--recast-lower-to-cpu` and\n")
string(APPEND text "`--recast-lower-to-nvvm` run them in order (docs/Architecture.md).\n\n")
foreach(group IN LISTS groups)
  string(REPLACE "|" ";" fields "${group}")
  list(GET fields 0 title)
  list(GET fields 1 file)
  list(GET fields 2 source)
  file(READ "${DOCS_DIR}/${file}.md" body)
  string(REGEX REPLACE "^<!--[^\n]*-->\n+" "" body "${body}")
  string(APPEND text "## ${title}\n\nFrom `${source}`.\n\n${body}\n")
endforeach()
string(REGEX REPLACE "\n+$" "\n" text "${text}")
file(WRITE "${OUTPUT}" "${text}")
