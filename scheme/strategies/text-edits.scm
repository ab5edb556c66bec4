;; text-edits: for models whose tool calls are unreliable. When a reply
;; makes no tool calls but its text holds edits (SEARCH/REPLACE blocks, a
;; V4A patch or a unified diff, told apart by their markers), they are
;; applied with apply-text: the guard, one confirm per file with its diff,
;; every file or none. The results go back to the model and the task goes
;; on; a reply with neither calls nor edits ends it. Hooks over the default
;; loop (before-model tells the model how to write a block; before-finish
;; applies the edits):
;;
;;   nib exec --strategy text-edits "fix the test"

;; Told to the model with the task, so it knows its text edits count.
(define edits-note
  "\n\nYou may change files with tool calls, or by writing SEARCH/REPLACE blocks in your reply:\n\npath/to/file.py\n```\n<<<<<<< SEARCH\nthe exact lines to replace\n=======\nthe new lines\n>>>>>>> REPLACE\n```\n\nAll the blocks of one reply are applied together, or none if any fails. When the task is done, answer without edits.")

(define edits-told (box #f))

;; The first request carries the note on how to write edits.
(on "before-model"
    (lambda (messages tools)
      (if (or (unbox edits-told) (null? messages))
          messages
          (begin
            (set-box! edits-told #t)
            (let ([first (car messages)])
              (cons (assoc-set first "content" (string-append (assoc-ref first "content" "") edits-note))
                    (cdr messages)))))))

;; Does some line of text start with prefix?
(define (has-line? text prefix)
  (or (starts-with? text prefix)
      (string-contains? text (string-append "\n" prefix))))

;; The format of the edits a reply's text holds, or #f.
(define (text-edit-format text)
  (cond
    [(and (string-contains? text "<<<<<<< SEARCH")
          (string-contains? text ">>>>>>> REPLACE"))
     "search-replace"]
    [(has-line? text "*** Begin Patch") "v4a"]
    [(and (has-line? text "--- ") (has-line? text "+++ ") (has-line? text "@@")) "udiff"]
    [else #f]))

;; The results of one reply's text edits, as the model reads them.
(define (results-message results)
  (let ([head (if (every? tool-ok? results)
                  "The edits in your reply were applied:"
                  "The edits in your reply were not applied; nothing was written:")])
    (string-append head "\n\n" (string-join (map tool-text results) "\n\n"))))

;; A reply without calls: its edits are applied and the task goes on with
;; their results; without edits, the task ends.
(on "before-finish"
    (lambda (text)
      (let ([fmt (text-edit-format text)])
        (if fmt
            (results-message (apply-text fmt text (unbox loop-step)))
            #f))))
