" Vim syntax file
" Language:    cnp (pipeline descriptions compiled by cnpc)
" Install:     copy docs/editors/vim/{syntax,ftdetect} into ~/.vim/
if exists("b:current_syntax")
  finish
endif

syn keyword cnpDecl      pipeline param const dim field stream event snapshot mirror mpi plan kernel import scalar history
syn keyword cnpStep      step on after map in record wait every offset repeat swap append
syn keyword cnpStmt      compact sort offsets sum copy refresh exchange migrate let by over with from host scan
syn keyword cnpStmt      fft ifft allreduce
syn keyword cnpFunction  rfft wave
syn keyword cnpModifier  measure split
syn keyword cnpCond      if else select
syn keyword cnpModifier  setup slots cuda_aware inclusive exclusive
syn keyword cnpType      bool i32 i64 u64 f16 f32 f64 c64 c128
syn keyword cnpBoolean   true false
syn keyword cnpFunction  sqrt exp log sin cos tan floor ceil fmod min max abs pow select complex real imag conj arg host_staging mpi_staging segments to_host to_device
syn match   cnpNumber    "\<\d\+\(\.\d*\)\=\([eE][+-]\=\d\+\)\=\>"
syn match   cnpNumber    "\<\d\+\(\.\d*\)\=\([eE][+-]\=\d\+\)\=i\>"
syn match   cnpNumber    "\.\d\+\([eE][+-]\=\d\+\)\=i\=\>"
syn match   cnpNumber    "\<0x\x\+\>"
syn region  cnpString    start=+"+ skip=+\\"+ end=+"+ oneline
syn match   cnpComment   "#.*$" contains=cnpTodo
syn keyword cnpTodo      TODO FIXME XXX contained
syn match   cnpOperator  "<-\|->\|+=\|==\|!=\|<=\|>=\|&&\|||"
syn match   cnpOperator  "\<\(min\|max\)=\(=\)\@!"

hi def link cnpDecl     Structure
hi def link cnpStep     Statement
hi def link cnpStmt     Statement
hi def link cnpCond     Conditional
hi def link cnpModifier StorageClass
hi def link cnpType     Type
hi def link cnpBoolean  Boolean
hi def link cnpFunction Function
hi def link cnpNumber   Number
hi def link cnpString   String
hi def link cnpComment  Comment
hi def link cnpTodo     Todo
hi def link cnpOperator Operator

let b:current_syntax = "cnp"
