" Recognize .cnp files as cnp pipeline descriptions.
autocmd BufRead,BufNewFile *.cnp setfiletype cnp
