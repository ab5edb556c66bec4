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
         string-truncate)

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
