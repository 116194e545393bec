"""The sentences of the bundled eHealth-KD corpus, written for Proctor, with their annotations.

Each sentence marks its keyphrases as ``[text]{L:key}`` (``L``: C Concept, A Action,
P Predicate, R Reference) and lists its relations as ``label source target`` by key, ``;``
between them. :mod:`generate` turns them into the official BRAT-like files.
"""

from __future__ import annotations

Annotated = tuple[str, str]
"""(marked sentence, relations)."""

TRAINING: tuple[Annotated, ...] = (
    ("La [diabetes]{C:a} [afecta]{A:b} los [riñones]{C:c}.", "subject b a; target b c"),
    ("La [fiebre]{C:a} es un [síntoma]{C:b} de la [gripe]{C:c}.", "is-a a b; causes c a"),
    ("El [asma]{C:a} [afecta]{A:b} los [pulmones]{C:c}.", "subject b a; target b c"),
    (
        "Los [antibióticos]{C:a} [tratan]{A:b} las [infecciones]{C:c} [bacterianas]{C:d}.",
        "subject b a; target b c; has-property c d",
    ),
    (
        "La [insulina]{C:a} [regula]{A:b} el [azúcar]{C:c} en la [sangre]{C:d}.",
        "subject b a; target b c; in-place c d",
    ),
    ("El [médico]{C:a} [receta]{A:b} [antibióticos]{C:c}.", "subject b a; target b c"),
    (
        "La [hipertensión]{C:a} [aumenta]{A:b} el [riesgo]{C:c} de [infarto]{C:d}.",
        "subject b a; target b c; in-context c d",
    ),
    ("El [corazón]{C:a} [bombea]{A:b} [sangre]{C:c}.", "subject b a; target b c"),
    ("El [dolor]{C:a} de [cabeza]{C:b} es [frecuente]{P:c}.", "in-place a b; domain c a"),
    ("La [tos]{C:a} es un [síntoma]{C:b} del [asma]{C:c}.", "is-a a b; causes c a"),
    (
        "El [ejercicio]{C:a} [reduce]{A:b} la [presión]{C:c} [arterial]{C:d}.",
        "subject b a; target b c; has-property c d",
    ),
    (
        "Los [niños]{C:a} [reciben]{A:b} [vacunas]{C:c} cada [año]{C:d}.",
        "subject b a; target b c; in-time b d",
    ),
    ("La [gripe]{C:a} causa [fiebre]{C:c} y [tos]{C:d}.", "causes a c; causes a d"),
    (
        "El [paciente]{C:a} [sufre]{A:b} [dolor]{C:c} en el [pecho]{C:d}.",
        "subject b a; target b c; in-place c d",
    ),
    (
        "La [obesidad]{C:a} [aumenta]{A:b} el [riesgo]{C:c} de [diabetes]{C:d}.",
        "subject b a; target b c; in-context c d",
    ),
    (
        "Los [pulmones]{C:a} forman parte del [sistema]{C:b} [respiratorio]{C:c}.",
        "part-of a b; has-property b c",
    ),
    (
        "[Esta]{R:r} [enfermedad]{C:a} [afecta]{A:b} a [muchas]{P:c} [personas]{C:d}.",
        "subject b a; target b d; domain c d",
    ),
    ("El [tratamiento]{C:a} [dura]{A:b} [seis semanas]{C:c}.", "subject b a; in-time b c"),
    ("La [vacuna]{C:a} [previene]{A:b} la [gripe]{C:c}.", "subject b a; target b c"),
    ("El [paracetamol]{C:a} [alivia]{A:b} la [fiebre]{C:c}.", "subject b a; target b c"),
    (
        "Una [dieta]{C:a} [sana]{P:b} [reduce]{A:c} el [colesterol]{C:d}.",
        "domain b a; subject c a; target c d",
    ),
    (
        "El [cáncer]{C:a} de [pulmón]{C:b} se [asocia]{A:c} al [tabaco]{C:d}.",
        "in-place a b; subject c a; target c d",
    ),
    ("Los [síntomas]{C:a} [aparecen]{A:b} por la [noche]{C:c}.", "subject b a; in-time b c"),
    (
        "La [presión]{C:a} [arterial]{C:b} [alta]{P:c} [daña]{A:d} el [corazón]{C:e}.",
        "has-property a b; domain c a; subject d a; target d e",
    ),
    (
        "La [neumonía]{C:a} es una [infección]{C:b} de los [pulmones]{C:c}.",
        "is-a a b; in-place b c",
    ),
)

DEV: dict[int, tuple[Annotated, ...]] = {
    1: (
        ("La [diabetes]{C:a} [afecta]{A:b} los [ojos]{C:c}.", "subject b a; target b c"),
        ("El [médico]{C:a} [receta]{A:b} [insulina]{C:c}.", "subject b a; target b c"),
        ("La [fiebre]{C:a} es un [síntoma]{C:b} de la [infección]{C:c}.", "is-a a b; causes c a"),
        (
            "El [paciente]{C:a} [sufre]{A:b} [tos]{C:c} por la [noche]{C:d}.",
            "subject b a; target b c; in-time b d",
        ),
    ),
    2: (
        ("La [gripe]{C:a} causa [dolor]{C:b} de [cabeza]{C:c}.", "causes a b; in-place b c"),
        ("Los [antibióticos]{C:a} [tratan]{A:b} la [neumonía]{C:c}.", "subject b a; target b c"),
        (
            "El [ejercicio]{C:a} [reduce]{A:b} el [riesgo]{C:c} de [infarto]{C:d}.",
            "subject b a; target b c; in-context c d",
        ),
        ("La [vacuna]{C:a} [previene]{A:b} el [sarampión]{C:c}.", "subject b a; target b c"),
    ),
    3: (
        ("La [obesidad]{C:a} [afecta]{A:b} el [corazón]{C:c}.", "subject b a; target b c"),
        ("El [paracetamol]{C:a} [alivia]{A:b} el [dolor]{C:c}.", "subject b a; target b c"),
        ("La [tos]{C:a} es [frecuente]{P:b} en los [niños]{C:c}.", "domain b a; in-context a c"),
        ("La [insulina]{C:a} [regula]{A:b} la [glucosa]{C:c}.", "subject b a; target b c"),
    ),
}

TEST: dict[int, tuple[Annotated, ...]] = {
    1: (
        ("La [hipertensión]{C:a} [afecta]{A:b} los [riñones]{C:c}.", "subject b a; target b c"),
        (
            "El [médico]{C:a} [receta]{A:b} [paracetamol]{C:c} para la [fiebre]{C:d}.",
            "subject b a; target b c; in-context b d",
        ),
        ("La [tos]{C:a} es un [síntoma]{C:b} de la [gripe]{C:c}.", "is-a a b; causes c a"),
        (
            "El [tabaco]{C:a} [aumenta]{A:b} el [riesgo]{C:c} de [cáncer]{C:d}.",
            "subject b a; target b c; in-context c d",
        ),
        (
            "Los [niños]{C:a} [reciben]{A:b} [vacunas]{C:c} en la [escuela]{C:d}.",
            "subject b a; target b c; in-place b d",
        ),
        ("El [dolor]{C:a} de [espalda]{C:b} es [común]{P:c}.", "in-place a b; domain c a"),
    ),
    2: (
        ("La [diabetes]{C:a} [daña]{A:b} los [nervios]{C:c}.", "subject b a; target b c"),
        ("Los [antibióticos]{C:a} no [tratan]{A:b} la [gripe]{C:c}.", "subject b a; target b c"),
        (
            "La [presión]{C:a} [arterial]{C:b} [alta]{P:c} [afecta]{A:d} el [cerebro]{C:e}.",
            "has-property a b; domain c a; subject d a; target d e",
        ),
        (
            "El [paciente]{C:a} [sufre]{A:b} [fiebre]{C:c} y [tos]{C:d}.",
            "subject b a; target b c; target b d",
        ),
        (
            "Una [dieta]{C:a} [sana]{P:b} [previene]{A:c} la [obesidad]{C:d}.",
            "domain b a; subject c a; target c d",
        ),
        (
            "El [asma]{C:a} [afecta]{A:b} a [muchos]{P:c} [niños]{C:d}.",
            "subject b a; target b d; domain c d",
        ),
    ),
    3: (
        ("El [ejercicio]{C:a} [mejora]{A:b} la [salud]{C:c}.", "subject b a; target b c"),
        (
            "La [insulina]{C:a} [reduce]{A:b} el [azúcar]{C:c} en la [sangre]{C:d}.",
            "subject b a; target b c; in-place c d",
        ),
        ("La [gripe]{C:a} causa [fiebre]{C:b}.", "causes a b"),
        (
            "El [corazón]{C:a} [bombea]{A:b} [sangre]{C:c} al [cuerpo]{C:d}.",
            "subject b a; target b c; in-place b d",
        ),
        ("La [vacuna]{C:a} [previene]{A:b} la [neumonía]{C:c}.", "subject b a; target b c"),
        ("El [dolor]{C:a} en el [pecho]{C:b} es [grave]{P:c}.", "in-place a b; domain c a"),
    ),
}
