" Writes the filetype, the syntax name and the highlight groups of a few tokens to $CNP_OUT.
function! s:group(pat) abort
  call cursor(1, 1)
  if search(a:pat, 'cW') == 0
    return '<not found>'
  endif
  return synIDattr(synID(line('.'), col('.'), 1), 'name')
endfunction
call writefile([&filetype, get(b:, 'current_syntax', ''), s:group('\<pipeline\>'),
      \ s:group('\<f64\>'), s:group('#'), s:group('\<2\.0\>')], $CNP_OUT)
