# The layering of the source tree is enforced by target links, not by comments: a folder's
# headers are reachable only through its include root, which only its own library exports.
# A file that includes "engine/x.h" compiles only if its target links compatd_engine (directly
# or through a PUBLIC dependency); docs/development.md, "Layout", lists who may link whom.
#
#   compatd_folder_library(compatd_engine <sources...>)   # in engine/CMakeLists.txt
#
# creates the library and <build>/include-roots/engine/engine -> <source>/engine, exported as
# the target's PUBLIC include directory. Nothing exports the source root itself.
# compatd_folder_include_root(<target> <scope> [<folder>]): makes <folder> (default: the
# current one) includable by <target> as "<folder>/...".
function(compatd_folder_include_root target scope)
  if(ARGC GREATER 2)
    set(folder ${ARGV2})
  else()
    file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  string(REPLACE "/" "_" root_name ${folder})
  set(root ${PROJECT_BINARY_DIR}/include-roots/${root_name})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT EXISTS ${root}/${folder})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  endif()
  target_include_directories(${target} ${scope} ${root})
endfunction()

function(compatd_folder_library target)
  add_library(${target} ${ARGN})
  compatd_folder_include_root(${target} PUBLIC)
endfunction()
