# The rooms of the house (docs/architecture.md) and the rule that holds them apart:
# code includes only from its own room and the rooms below it.
#
# Every #include of our own is written from the repository root ("core/nn/attention.h").
# Instead of the root, each room's library gets an include folder of its own in the
# build tree that holds links to its room and to the rooms it may see, and nothing else:
# an include that points up (core/ naming session/, nn/ naming models/) or sideways
# (text/ naming image/) finds no file and fails to compile, naming the line.
#
# headscope_room(<target> <room> [SEES <room>...])
#   <room>, each SEES: a folder relative to the repository root (core/nn, session, ui).
function(headscope_room target room)
    cmake_parse_arguments(arg "" "" "SEES" ${ARGN})
    set(view "${CMAKE_BINARY_DIR}/include_views/${target}")
    file(REMOVE_RECURSE "${view}")
    foreach(visible IN LISTS room arg_SEES)
        get_filename_component(parent "${view}/${visible}" DIRECTORY)
        file(MAKE_DIRECTORY "${parent}")
        file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${visible}" "${view}/${visible}" SYMBOLIC)
    endforeach()
    target_include_directories(${target} PUBLIC "${view}")
    target_link_libraries(${target} PRIVATE headscope_warnings)
endfunction()
