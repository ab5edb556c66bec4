;; nib prelude: the helpers every strategy gets, at top level and in every
;; module. It loads into every engine, so it stays small.
;;
;; Host data arrives as association lists with string keys:
;;   {"ok": true, "text": "..."}  =>  (("ok" . #t) ("text" . "..."))
;; and JSON null arrives as `void` (json-null).

(provide json-null
         json-null?
         assoc-ref
         assoc-set
         assoc-remove
         json-object
         tool-ok?
         tool-text
         tool-refused?
         filter-map
         any?
         every?
         count-if
         take-at-most
         index-of
         string-truncate
         ;; hooks (docs/strategies.md)
         on
         refuse
         refusal?
         hook-points
         hooks-at
         hook-count
         restrict-hooks-from!
         restrict-new-hooks!
         hook-tightens-only?
         run-before-model
         run-after-reply
         run-before-tool
         run-after-tool
         run-before-finish)

(define json-null void)

;; (json-null? x): was x null in JSON?
(define (json-null? x)
  (void? x))

(define (entry-for? entry key)
  (and (pair? entry) (equal? (car entry) key)))

;; (assoc-ref alist key [default]): the value under key, or default (#f).
;; (case-lambda, not an optional argument: steel 0.8.3 drops a symbol passed
;; for an optional argument.)
(define (assoc-ref/default alist key default)
  (let loop ([xs alist])
    (cond
      [(null? xs) default]
      [(entry-for? (car xs) key) (cdr (car xs))]
      [else (loop (cdr xs))])))

(define assoc-ref
  (case-lambda
    [(alist key) (assoc-ref/default alist key #f)]
    [(alist key default) (assoc-ref/default alist key default)]))

;; (assoc-set alist key value): alist with key's value replaced in place, or
;; added at the end.
(define (assoc-set alist key value)
  (let loop ([xs alist]
             [seen '()])
    (cond
      [(null? xs) (reverse (cons (cons key value) seen))]
      [(entry-for? (car xs) key) (append (reverse (cons (cons key value) seen)) (cdr xs))]
      [else (loop (cdr xs) (cons (car xs) seen))])))

;; (assoc-remove alist key): alist without key's entries.
(define (assoc-remove alist key)
  (filter (lambda (entry) (not (entry-for? entry key))) alist))

;; (json-object "k1" v1 "k2" v2 ...): an association list, i.e. a JSON object.
(define (json-object . kvs)
  (let loop ([xs kvs]
             [out '()])
    (cond
      [(null? xs) (reverse out)]
      [(null? (cdr xs)) (error "json-object: expects key value pairs; the last key has no value")]
      [else (loop (cddr xs) (cons (cons (car xs) (cadr xs)) out))])))

;; A primitive's result: (("ok" . #t) ("text" . "...") ("decision" . "allow") ...)
(define (tool-ok? result)
  (equal? (assoc-ref result "ok" #f) #t))

(define (tool-text result)
  (assoc-ref result "text" ""))

(define (tool-refused? result)
  (equal? (assoc-ref result "refused" #f) #t))

;; (filter-map f xs): the non-#f results of (f x).
(define (filter-map f xs)
  (let loop ([xs xs]
             [out '()])
    (if (null? xs)
        (reverse out)
        (let ([y (f (car xs))]) (loop (cdr xs) (if y (cons y out) out))))))

;; (any? pred xs) / (every? pred xs)
(define (any? pred xs)
  (cond
    [(null? xs) #f]
    [(pred (car xs)) #t]
    [else (any? pred (cdr xs))]))

(define (every? pred xs)
  (cond
    [(null? xs) #t]
    [(pred (car xs)) (every? pred (cdr xs))]
    [else #f]))

;; (count-if pred xs): how many x satisfy pred.
(define (count-if pred xs)
  (let loop ([xs xs]
             [n 0])
    (if (null? xs)
        n
        (loop (cdr xs) (if (pred (car xs)) (+ n 1) n)))))

;; (take-at-most xs n): the first n elements, or all of a shorter list.
(define (take-at-most xs n)
  (let loop ([xs xs]
             [n n]
             [out '()])
    (if (or (null? xs) (<= n 0))
        (reverse out)
        (loop (cdr xs) (- n 1) (cons (car xs) out)))))

;; (index-of pred xs): the 0-based index of the first x satisfying pred, or #f.
(define (index-of pred xs)
  (let loop ([xs xs]
             [i 0])
    (cond
      [(null? xs) #f]
      [(pred (car xs)) i]
      [else (loop (cdr xs) (+ i 1))])))

;; (string-truncate s n): s, or its first n characters and "...".
(define (string-truncate s n)
  (if (<= (string-length s) n)
      s
      (string-append (substring s 0 n) "...")))
;; ------------------------------------------------------------------ hooks
;;
;; The default loop calls the hooks registered with `on` at five points, in
;; registration order (docs/strategies.md). A hook from a workspace's
;; .nib/hooks/ may only tighten: its before-tool hooks may refuse, its
;; before-finish hooks may veto; anything else it returns is ignored.

(define hook-points
  (list "before-model" "after-reply" "before-tool" "after-tool" "before-finish"))

;; Each hook: (point tightens-only? proc), in registration order.
(define *hooks* (box '()))
;; Set once loading is over: hooks registered later (from inside a hook)
;; count as a workspace's.
(define *restrict-new* (box #f))

;; (on point proc): call proc at point; see docs/strategies.md.
(define (on point proc)
  (if (not (member point hook-points))
      (error (string-append "on: there is no hook point \"" (if (string? point) point "?")
                            "\"; the points are before-model, after-reply, before-tool, after-tool, before-finish"))
      (if (not (procedure? proc))
          (error (string-append "on: the hook for " point " must be a procedure"))
          (begin
            (set-box! *hooks* (append (unbox *hooks*) (list (list point (unbox *restrict-new*) proc))))
            point))))

(define (hook-count) (length (unbox *hooks*)))

;; Hooks from index n on may only tighten (the host calls this after
;; loading a workspace's hook file; calling it can only take power away).
(define (restrict-hooks-from! n)
  (set-box! *hooks*
            (let loop ([xs (unbox *hooks*)] [i 0] [out '()])
              (if (null? xs)
                  (reverse out)
                  (loop (cdr xs) (+ i 1)
                        (cons (if (>= i n) (list (car (car xs)) #t (caddr (car xs))) (car xs)) out)))))
  #t)

(define (restrict-new-hooks!) (set-box! *restrict-new* #t) #t)

(define (hook-tightens-only? h) (cadr h))

(define (hooks-at point)
  (filter (lambda (h) (equal? (car h) point)) (unbox *hooks*)))

;; (refuse why): what a before-tool hook returns to refuse a call; the
;; model gets why.
(define (refuse why) (list (cons "refuse" why)))

(define (refusal? x)
  (and (list? x) (not (null? x)) (pair? (car x)) (equal? (car (car x)) "refuse")))

;; Threads value through the hooks at point: each gets (value extra ...)
;; and returns the new value, or #f / void to keep it.
(define (thread-hooks point value extras)
  (let loop ([hs (hooks-at point)] [v value])
    (if (null? hs)
        v
        (let* ([h (car hs)]
               [out (apply (caddr h) (cons v extras))])
          (loop (cdr hs)
                (if (or (hook-tightens-only? h) (not out) (void? out)) v out))))))

;; before-model: (hook messages tools) -> messages
(define (run-before-model messages tools)
  (thread-hooks "before-model" messages (list tools)))

;; after-reply: (hook reply) -> reply
(define (run-after-reply reply)
  (thread-hooks "after-reply" reply '()))

;; before-tool: (hook call) -> the call (maybe rewritten), (refuse why), or
;; #t / #f / void to let it run as it is. The first refusal wins.
(define (run-before-tool call)
  (let loop ([hs (hooks-at "before-tool")] [c call])
    (if (null? hs)
        c
        (let* ([h (car hs)]
               [out ((caddr h) c)])
          (cond
            [(refusal? out) out]
            [(or (hook-tightens-only? h) (not (list? out)) (null? out)) (loop (cdr hs) c)]
            [else (loop (cdr hs) out)])))))

;; after-tool: (hook call result) -> result
(define (run-after-tool call result)
  (let loop ([hs (hooks-at "after-tool")] [r result])
    (if (null? hs)
        r
        (let* ([h (car hs)]
               [out ((caddr h) call r)])
          (loop (cdr hs) (if (or (hook-tightens-only? h) (not out) (void? out)) r out))))))

;; before-finish: (hook text) -> #f to let the task end, or a string: the
;; task goes on, with that string sent to the model. The first veto wins.
(define (run-before-finish text)
  (let loop ([hs (hooks-at "before-finish")])
    (if (null? hs)
        #f
        (let ([out ((caddr (car hs)) text)])
          (if (string? out) out (loop (cdr hs)))))))
